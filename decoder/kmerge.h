/* kmerge.h — the timeline of a dump, merged CPU by CPU in bounded memory.
 *
 * The same order as merge.h (and Python's stable sort of all CPUs'
 * events, CPU after CPU, by (tsc, cpu, seq)), made without joining the
 * CPUs' records: a heap of the CPUs' next events hands them out in
 * timeline order, a chunk at a time, so memory beyond the CPUs' own
 * records is the chunk and one index array for each CPU whose records
 * are not already in order (bt_merge_order() sorts it; ties there keep
 * ring order). Between CPUs, a tie on (tsc, cpu, seq) goes to the CPU
 * given first, as the stable sort of their concatenation does.
 *
 *     bt_scan(ev, n, &s);                        per CPU: in order? t range, types
 *     bt_kmerge_init(&m, src, nsrc, heap);       src[i]: CPU i's records (+ order)
 *     while ((k = bt_kmerge_next(&m, out, idx, CHUNK)) || m.starved) {
 *         ...                                    out[0..k) in timeline order,
 *                                                idx[j]: out[j]'s index among all CPUs'
 *         if (m.starved) {                       a window ran out: the next one
 *             s = m.starved - 1; src[s].ev = ...; src[s].lo = src[s].hi; src[s].hi += ...;
 *             bt_kmerge_refill(&m, s);
 *         }
 *     }
 *
 * A CPU in order need not be in memory whole: its source may hold one
 * window of its records, [lo, hi), and the merge stops (m.starved) before
 * giving any event after the window's last, until the caller loads the
 * next window. A CPU out of order (an order array) is given whole. */
#ifndef DECODER_KMERGE_H
#define DECODER_KMERGE_H
#include <stddef.h>
#include <stdint.h>
#include "trace/event.h"

/* What one pass over a CPU's records finds (bt_scan adds to it). */
struct bt_scan {
    uint64_t min_tsc, max_tsc;       /* over every record scanned so far */
    uint64_t events;                 /* records scanned so far */
    uint32_t sorted;                 /* the last bt_scan's records were in order */
    uint32_t consecutive;            /* ... and each one's seq was the one before's + 1 */
    uint8_t types[65536];           /* types[t] = 1: some record has type t */
};

/* Starts s empty (min_tsc = UINT64_MAX, max_tsc = 0). */
void bt_scan_init(struct bt_scan *s);
/* Adds ev[0..n) to s and sets s->sorted and s->consecutive (a seq wrap
 * from 2^32 - 1 to 0 counts as a break). */
void bt_scan(const struct trace_event *ev, size_t n, struct bt_scan *s);

/* One CPU's n records, of which ev[0..hi - lo) are those from lo to hi
 * (the whole CPU: lo = 0, hi = n), and, unless they are in timeline order
 * already, order[0..n) the indices that put them in it (then whole). */
struct bt_kmerge_src {
    const struct trace_event *ev;
    const uint32_t *order;           /* NULL: ev is in order */
    uint64_t n;
    uint64_t at;                     /* how many it has given (bt_kmerge state) */
    uint64_t base;                   /* index of its record 0 among all CPUs' records */
    uint64_t lo, hi;                 /* the window ev holds */
    uint64_t cpu;                    /* its dense CPU number (records keep only 8 bits) */
};

/* A source not yet used up, keyed by its next event: (tsc, cpu << 32 | seq, src),
 * cpu the source's. */
struct bt_kmerge_head {
    uint64_t tsc, key, src;
};

struct bt_kmerge {
    struct bt_kmerge_src *src;
    struct bt_kmerge_head *heap;     /* a binary heap, earliest first */
    uint64_t nheap;
    uint64_t starved;                /* 1 + the source whose window ran out, or 0 */
};

/* Starts m over src[0..nsrc) (at = 0 in each); heap holds nsrc entries. */
void bt_kmerge_init(struct bt_kmerge *m, struct bt_kmerge_src *src, size_t nsrc,
                    struct bt_kmerge_head *heap);
/* Copies the next (up to max) events in timeline order to out, their
 * CPUs' numbers (their sources' cpu) to cpu, and their indices among all
 * CPUs' records (CPU after CPU) to idx; any may be NULL. Returns how many: 0 once every event was given, or when a
 * source's window ran out (m->starved) right before this call. Stops
 * early when one runs out. */
size_t bt_kmerge_next(struct bt_kmerge *m, struct trace_event *out, uint32_t *cpu,
                      uint64_t *idx, size_t max);
/* Puts back source s (m->starved - 1), whose ev, lo and hi now hold its
 * next window (lo = its at), and clears m->starved. */
void bt_kmerge_refill(struct bt_kmerge *m, uint64_t s);

#endif
