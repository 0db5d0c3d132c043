/* perfettoout.h — Perfetto's protobuf trace (TrackEvent) of one CPU, from records.
 *
 * Writes exactly what scripts/btlib/export_perfetto.py's reference writer
 * writes for a CPU's events after its sequence's first packet, byte for
 * byte: each a Trace.packet (field 1, length-delimited) in ring order.
 *   - before event i, the caller's marker bytes of position i (its *LOST*
 *     packets, already encoded);
 *   - the events-per-second and ring-fill counters of the 10 ms bucket
 *     (bt_pf.bucket_ns) that ends before event i, each when its value
 *     differs from the last one written (a gap of empty buckets: one 0);
 *   - the event's packet: timestamp (ns since t0, floor, clamped to
 *     0..2^63-1: Perfetto reads it signed), trusted_packet_sequence_id, a TrackEvent and
 *     sequence_flags SEQ_NEEDS_INCREMENTAL_STATE. The TrackEvent is its
 *     format's head (category_iids, type, name_iid: a slice's BEGIN, a
 *     slice's END, or an instant), its debug annotations (interned names;
 *     uint_value, int_value for a signed argument, string_value for a
 *     named boot phase), "unmatched": true for a BEGIN/END half without a
 *     partner, "crossing": the partner's seq for a half of a slice that
 *     cannot nest in time on the track (an instant: bt_pf_pair marks
 *     them), the timer's lateness in ns as extra_counter_values (its
 *     track is the sequence's default), and the caller's flow ids
 *     (flow_ids on a cause, terminating_flow_ids on an effect);
 *   - after the last event, the last bucket's counters, then the marker
 *     bytes of position n.
 * The track is the sequence's default (trace_packet_defaults, written by
 * the caller), except for counters. Field numbers: docs/host-tools.md and
 * test/host/perfetto_trace.proto. */
#ifndef DECODER_PERFETTOOUT_H
#define DECODER_PERFETTOOUT_H
#include <stddef.h>
#include <stdint.h>
#include "decoder/csvout.h"
#include "decoder/jsonout.h"
#include "recorder/pairing.h"
#include "trace/event.h"

#define BT_PF_FIELDS  4
#define BT_PF_ROW_MAX 2048          /* bytes one event's packets take, at most, beyond flows */

/* How one kind of packet is shown: an instant of a type, or a slice's
 * BEGIN or END of a (BEGIN type, END type) pair. */
struct bt_pf_fmt {
    const uint8_t *head;                    /* TrackEvent fields before the annotations */
    uint32_t nhead;
    uint32_t nfields;
    uint64_t label[BT_PF_FIELDS];           /* annotation name iids */
    uint8_t arg[BT_PF_FIELDS];             /* 0..3: a0, a1 of this event, of the partner */
    uint8_t phase[BT_PF_FIELDS];           /* 1: a phase name when the table has it */
    uint8_t sgn[BT_PF_FIELDS];             /* 1: the value is an int64_t */
};

/* Caller-encoded packets written before event `at` (at == n: after the last). */
struct bt_pf_mark {
    uint64_t at;                            /* sorted, unique */
    const uint8_t *data;
    uint64_t len;
};

/* A flow end on event `at`. */
struct bt_pf_flow {
    uint64_t at;                            /* sorted */
    uint64_t id;
    uint32_t terminating;                   /* 1: the effect */
    uint32_t unused;
};

struct bt_pf {
    const struct bt_pf_fmt *fmts;           /* instants: fmts[type_index[type]] */
    const uint16_t *type_index;             /* [65536] */
    const struct bt_json_pair *pairs;       /* fmt: the BEGIN's format; fmt + 1 the END's */
    size_t npairs;
    const struct bt_phase *phases;          /* names as they are */
    size_t nphases;
    uint64_t t0, hz;                        /* hz > 0 */
    uint32_t timer;                         /* the tick's type; > 0xffff: none */
    uint32_t unused;
    uint64_t unmatched_iid;                 /* the annotation name "unmatched" */
    uint64_t bucket_ns;                     /* > 0 */
    uint64_t crossing_iid;                  /* the annotation name "crossing" */
};

/* One CPU's events and where its writing stands. */
struct bt_pf_cpu {
    const struct trace_event *ev;
    size_t n;
    uint32_t *partner;                      /* [n], filled by bt_pf_pair() */
    uint8_t *kind;                         /* [n]: 0 instant, 1 BEGIN, 2 END, 3 unmatched,
                    * 4 a crossing slice's half */
    const struct bt_pf_mark *marks;
    size_t nmarks;
    const struct bt_pf_flow *flows;
    size_t nflows;
    uint64_t seq_id;                        /* trusted_packet_sequence_id */
    uint64_t rate_track, fill_track;        /* counter track uuids; fill 0: none */
    uint64_t base, cap;                     /* ring fill = min(cap, seq - base + 1), u32 seqs */
    size_t at, mark_at, flow_at;          /* progress: start all at 0 */
    uint64_t bucket, count, last_rate, last_fill, held;
    uint32_t have_bucket, have_rate, have_fill, done;   /* start all at 0 */
};

/* Pairs c's events (bt_pair_cpu with roles[0..nroles)) and fills
 * c->partner and c->kind, marking the halves of slices that cannot nest
 * in time on the track (4: export_perfetto.crossing()'s rule). Returns the
 * unmatched count, or -1 when memory runs out, c has too many events or a
 * pair has no format. */
long bt_pf_pair(const struct bt_pf *pf, struct bt_pf_cpu *c,
                const struct pairing_role *roles, uint32_t nroles);

/* Writes c's packets from c->at into out[0..cap) until fewer than
 * 2 * BT_PF_ROW_MAX + 11 * (flows on the next event) bytes are left or c is
 * done (c->done); returns the bytes written. out needs the longest mark's
 * bytes beyond cap. */
size_t bt_pf_rows(const struct bt_pf *pf, struct bt_pf_cpu *c, uint8_t *out, size_t cap);

/* The indices of ev[0..n)'s events whose type has want[type] != 0, into
 * idx (n entries); returns how many. */
size_t bt_pick_types(const struct trace_event *ev, size_t n, const uint8_t *want,
                     uint32_t *idx);

#endif
