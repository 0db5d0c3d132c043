/* merge.h — the timeline order of a dump's events, for the host decoder.
 *
 * The decoder shows all CPUs' events merged by (tsc, cpu, seq), ties kept
 * in the order given (CPU by CPU, oldest first): exactly what Python's
 * stable list.sort(key=(tsc, cpu, seq)) gives (btlib.model.Dump.events).
 * Each CPU's events are usually already in TSC order, so this is a
 * natural merge sort: ascending runs are found, then merged pairwise,
 * O(n log runs). */
#ifndef HOST_MERGE_H
#define HOST_MERGE_H
#include <stddef.h>
#include "trace/event.h"

/* Sorts ev[0..n) in place into timeline order (stable); tmp holds n
 * records of scratch space. */
void bt_merge_sort(struct trace_event *ev, struct trace_event *tmp, size_t n);

#endif
