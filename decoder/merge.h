/* merge.h — the timeline order of a dump's events, for the host decoder.
 *
 * The decoder shows all CPUs' events merged by (tsc, cpu, seq), ties kept
 * in the order given (CPU by CPU, oldest first): exactly what Python's
 * stable list.sort(key=(tsc, cpu, seq)) gives (btlib.model.Dump.events).
 * Each CPU's events are usually already in TSC order, so this is a
 * natural merge sort: ascending runs are found, then merged pairwise,
 * O(n log runs). It sorts indices, so that a caller holding the events
 * as objects can reorder those instead of building new ones. kmerge.h
 * gives the same order for a whole dump without joining its CPUs'
 * records, using bt_merge_order() only on a CPU whose ring is out of order.
 *
 *     bt_merge_order(ev, n, order, tmp);     order[k]: index of the k-th
 *     bt_gather(ev, order, n, out);          out[k] = ev[order[k]] */
#ifndef DECODER_MERGE_H
#define DECODER_MERGE_H
#include <stddef.h>
#include <stdint.h>
#include "trace/event.h"

/* Event a before event b in the timeline: by tsc, then cpu, then seq
 * (equal: neither; the caller keeps them in the order given). */
static inline int bt_before(const struct trace_event *a, const struct trace_event *b)
{
    if (a->tsc != b->tsc)
        return a->tsc < b->tsc;
    if (a->cpu != b->cpu)
        return a->cpu < b->cpu;
    return a->seq < b->seq;
}

/* order and tmp hold n indices each (n < 2^32). */
void bt_merge_order(const struct trace_event *ev, size_t n, uint32_t *order, uint32_t *tmp);
void bt_gather(const struct trace_event *ev, const uint32_t *order, size_t n,
               struct trace_event *out);

#endif
