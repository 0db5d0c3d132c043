/* jsonout.h — the Chrome Trace Event JSON of one CPU, straight from records.
 *
 * Writes exactly what scripts/btlib/export_json.py writes for a CPU's
 * events (after its two metadata records), byte for byte, each record
 * preceded by ",\n", in ring order:
 *   - before event i, the caller's marker text of position i (its *LOST*
 *     records, already joined, without the leading ",\n");
 *   - a slice's BEGIN: an "X" record, its head ('{"name":"IRQ_TIMER",
 *     "cat":"irq","ph":"X","ts":'), ts, "dur", pid 0, tid (the END's cpu
 *     byte) and the args of both halves (values 0-1: the BEGIN's a0/a1,
 *     2-3: the END's); a slice's END: nothing;
 *   - any other event: an "i" record with its type's args, plus
 *     "unmatched":true for a BEGIN/END half without a partner;
 *   - after a timer tick later (in TSC) than the CPU's previous one, its tick rate
 *     counter, f'{hz / (tsc - previous_tsc):.3f}' Hz.
 * Times are microseconds with three decimals of floor((tsc - t0) * 1e9 /
 * hz) (exact, 128-bit). An argument value is the int64_t it holds when
 * declared signed; of magnitude 2^53 or more it is a quoted hex string
 * ("0x...", "-0x..."); else a boot phase argument shows the phase's name
 * when the table has it, and any other value is a decimal number. */
#ifndef DECODER_JSONOUT_H
#define DECODER_JSONOUT_H
#include <stddef.h>
#include <stdint.h>
#include "decoder/csvout.h"
#include "recorder/pairing.h"
#include "trace/event.h"

#define BT_JSON_FIELDS 4

/* How one event type (an instant) or one BEGIN/END pair (a slice) is shown. */
struct bt_json_fmt {
    const char *head;                       /* the record up to the ts value */
    const char *label[BT_JSON_FIELDS];      /* '"tick":', ',"lateness_tsc":' */
    uint32_t nfields;
    uint8_t arg[BT_JSON_FIELDS];        /* 0..3: a0, a1, END's a0, END's a1 */
    uint8_t phase[BT_JSON_FIELDS];      /* 1: show a phase name if known */
    uint8_t sgn[BT_JSON_FIELDS];        /* 1: the value is an int64_t */
};

/* The format of the slices from a BEGIN of type begin to an END of type end. */
struct bt_json_pair {
    uint32_t begin, end;                    /* sorted by (begin, end), unique */
    uint32_t fmt;                           /* index in bt_json.fmts */
};

/* The caller's text written before event `at` of the CPU (at == n: after
 * the last event). */
struct bt_json_mark {
    uint64_t at;                         /* sorted, unique */
    const char *text;
};

struct bt_json {
    const struct bt_json_fmt *fmts;        /* instants: fmts[type_index[type]] */
    const uint16_t *type_index;  /* [65536] */
    const struct bt_json_pair *pairs;
    size_t npairs;
    const struct bt_phase *phases;      /* names JSON-quoted, values < 2^53 */
    size_t nphases;
    uint64_t t0, hz;                        /* hz > 0 */
    uint32_t timer;                         /* the tick's type; > 0xffff: none */
    size_t row_max;                       /* bytes one event's records can take */
};

/* One CPU's events and where its writing stands. */
struct bt_json_cpu {
    const struct trace_event *ev;
    size_t n;
    uint32_t *role;                         /* [n], filled by bt_json_pair() */
    const struct bt_json_mark *marks;
    size_t nmarks;
    uint64_t cpu;                           /* the CPU's number (the counter's name) */
    size_t at, mark_at;                   /* progress: start both at 0 */
    uint64_t prev_tick;
    uint32_t have_tick;                     /* start at 0 */
};

/* The pair (b, e) in pairs[0..n) (sorted by (begin, end)), or NULL. */
const struct bt_json_pair *bt_json_find_pair(const struct bt_json_pair *pairs, size_t n,
                                             uint32_t b, uint32_t e);

/* Pairs c's events (decoder/pairs.h bt_pair_cpu, with roles[0..nroles))
 * and fills c->role: which are slices, their ENDs, unmatched halves.
 * Returns the unmatched count, or -1 when memory runs out, c has too many
 * events or a slice's (BEGIN type, END type) has no format. */
long bt_json_pair(const struct bt_json *j, struct bt_json_cpu *c,
                  const struct pairing_role *roles, uint32_t nroles);

/* Formats c's records from c->at into out[0..cap) until fewer than
 * j->row_max bytes are left or the events are done, the mark of position
 * n (a hole after the last event) included; returns the bytes written.
 * Done when c->at == c->n and c->mark_at == c->nmarks. out needs the
 * longest mark text's bytes beyond cap. */
size_t bt_json_rows(const struct bt_json *j, struct bt_json_cpu *c, char *out, size_t cap);

#endif
