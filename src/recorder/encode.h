/* encode.h — streams a trace dump as 7-bit ASCII lines (docs/dump-format.md).
 *
 * Pure C, no heap, under 2 KiB of stack. The encoder snapshots each ring
 * (ring_snap_*) and hands the sink one complete line per call as it goes,
 * each ending in "\n" (a sink may send "\r\n"; decoders accept CR LF, LF, CR):
 *
 *     DUMP BEGIN v=2 dump=3 nonce=<16 hex> cpus=16 events=65536
 *     %M 1 tsc_hz=... ...        metadata, categories, phases, event table
 *     %I 2 key=cpu.brand desc=.. the machine's identity, one item a line
 *     %E<base64>                 events, one CPU at a time, oldest first
 *     %C 9 cpu=0 apic=0 ...      that CPU's counters
 *     DUMP END dump=3 nonce=<16 hex> events=65536 lines=2400
 *
 * The dump's id (nonce, dump number) seeds the CRC of every line after
 * DUMP BEGIN, so a line of another dump or another boot never passes as
 * one of this dump's.
 *
 * Call it on rings that hold still: shadow copies (snapshot_take), or the
 * live rings with tracing paused (trace_pause + trace_quiesce); events
 * still in flight are excluded and counted, never garbled. A stream's
 * part (meta->stream) reads the running rings behind their writers
 * instead, from where the previous part stopped (docs/streaming.md). */
#ifndef RECORDER_ENCODE_H
#define RECORDER_ENCODE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace/ring.h"

#define DUMP_FORMAT_VERSION 2
#define DUMP_LINE_MAX       200   /* characters per line, before the "\n" */

/* Where a dump stands, reported after each line it sends. */
struct dump_progress {
    uint32_t dump_no;
    uint32_t lines;               /* sent so far, DUMP BEGIN included */
    uint64_t events_sent;         /* in the event lines sent so far */
    uint64_t events_total;        /* what the rings held at DUMP BEGIN */
    bool done;                /* DUMP END is out */
};

/* Where lines go: write(ctx, s, n) sends n bytes (one whole line); then
 * progress (when not NULL) is told where the dump stands. */
struct dump_sink {
    void (*write)(void *ctx, const char *s, size_t n);
    void *ctx;
    void (*progress)(const struct dump_progress *p);
};

/* One free-form metadata item: key=str, or key=num (decimal) when str is
 * NULL. Keys keep [A-Za-z0-9_.-]; values keep printable ASCII, other bytes
 * become '_'. Examples: invariant_tsc=1, tsc_warp=120, uptime_tsc=..., */
struct dump_extra {
    const char *key;
    const char *str;
    uint64_t num;
};

struct dump_meta {
    uint32_t dump_no;   /* 1, 2, ... since boot */
    uint64_t tsc_hz;    /* 0 when unknown */
    const uint32_t *apic_ids;  /* [ncpus] or NULL (unknown) */
    const struct dump_extra *extras;    /* [nextras] or NULL */
    unsigned nextras;
    uint64_t nonce;     /* per boot (boot_nonce()); with dump_no the dump's id */
    bool previous_boot;  /* rings kept from the previous boot: boot=previous */
    const struct dump_extra *identity;  /* [nidentity] or NULL: the %I lines (what the */
    unsigned nidentity; /* machine is), one item each, value in desc= */
    /* A stream's part (docs/streaming.md); stream 0: an ordinary dump,
     * and the fields below stay 0. */
    uint32_t stream;    /* 1, 2, ... since boot: DUMP BEGIN's stream= */
    uint32_t part;      /* 0, 1, ... within the stream: part= */
    bool final;         /* the stream's last part: final=1 */
    bool tables;        /* the part carries the tables (part 0); false: the
                  * short %M (tsc_hz, stream, part, the extras) and
                  * no %I, %K, %P, %T, %W lines. Ignored for a dump */
    /* The rings are read live, behind their writers (ring_snap_begin_from),
     * when stream != 0 or from != NULL. */
    const struct ring_mark *from;   /* [ncpus]: each CPU's first seq; NULL: the ring's base */
    struct ring_mark *to;           /* [ncpus] or NULL: where each CPU's events stopped */
    size_t room;        /* the most bytes the lines may take (0: no bound): a CPU's
                  * events stop early, and its mark says where, so that
                  * the part fits; room must leave each CPU a line */
};

/* Writes one complete dump of rings[0..ncpus) (index = dense CPU number;
 * a NULL ring is reported as a CPU without a ring). Returns the number of
 * events written, i.e. the events= of the DUMP END line. With room, each
 * CPU gets an equal share of what the lines before it left. */
uint64_t dump_encode(const struct dump_sink *sink, const struct dump_meta *meta,
                     struct ring *const rings[], unsigned ncpus);

#endif
