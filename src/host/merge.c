/* merge.c — stable natural merge sort into timeline order (merge.h). */
#include <string.h>
#include "host/merge.h"

/* a before b in the timeline: by tsc, then cpu, then seq. */
static int before(const struct trace_event *a, const struct trace_event *b)
{
    if (a->tsc != b->tsc)
        return a->tsc < b->tsc;
    if (a->cpu != b->cpu)
        return a->cpu < b->cpu;
    return a->seq < b->seq;
}

/* Merges the sorted src[lo..mid) and src[mid..hi) into dst[lo..hi); on a
 * tie the left one goes first (stability). */
static void merge(const struct trace_event *src, struct trace_event *dst,
                  size_t lo, size_t mid, size_t hi)
{
    size_t i = lo, j = mid, o = lo;
    while (i < mid && j < hi)
        dst[o++] = before(&src[j], &src[i]) ? src[j++] : src[i++];
    memcpy(&dst[o], &src[i], (mid - i) * sizeof *dst);
    o += mid - i;
    memcpy(&dst[o], &src[j], (hi - j) * sizeof *dst);
}

/* End of the non-descending run starting at lo. */
static size_t run_end(const struct trace_event *ev, size_t lo, size_t n)
{
    size_t i = lo + 1;
    while (i < n && !before(&ev[i], &ev[i - 1]))
        i++;
    return i;
}

void bt_merge_sort(struct trace_event *ev, struct trace_event *tmp, size_t n)
{
    struct trace_event *src = ev, *dst = tmp;
    for (;;) {
        /* One pass: merge each pair of neighbouring runs from src into dst. */
        size_t lo = 0, runs = 0;
        while (lo < n) {
            size_t mid = run_end(src, lo, n);
            size_t hi = mid < n ? run_end(src, mid, n) : n;
            merge(src, dst, lo, mid, hi);
            lo = hi;
            runs++;
        }
        struct trace_event *t = src;
        src = dst;
        dst = t;
        if (runs <= 1)
            break;
    }
    if (src != ev)
        memcpy(ev, src, n * sizeof *ev);
}
