/* merge.c — stable natural merge sort into timeline order (merge.h). */
#include "decoder/merge.h"
#include <string.h>

/* Merges the sorted src[lo..mid) and src[mid..hi) (indices into ev) into
 * dst[lo..hi); on a tie the left one goes first (stability). */
static void merge(const struct trace_event *ev, const uint32_t *src, uint32_t *dst,
                  size_t lo, size_t mid, size_t hi)
{
    size_t i = lo, j = mid, o = lo;
    while (i < mid && j < hi)
        dst[o++] = bt_before(&ev[src[j]], &ev[src[i]]) ? src[j++] : src[i++];
    memcpy(&dst[o], &src[i], (mid - i) * sizeof *dst);
    o += mid - i;
    memcpy(&dst[o], &src[j], (hi - j) * sizeof *dst);
}

/* End of the non-descending run of src starting at lo. */
static size_t run_end(const struct trace_event *ev, const uint32_t *src, size_t lo, size_t n)
{
    size_t i = lo + 1;
    while (i < n && !bt_before(&ev[src[i]], &ev[src[i - 1]]))
        i++;
    return i;
}

void bt_merge_order(const struct trace_event *ev, size_t n, uint32_t *order, uint32_t *tmp)
{
    uint32_t *src = order, *dst = tmp;
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    for (;;) {
        /* One pass: merge each pair of neighbouring runs from src into dst. */
        size_t lo = 0, runs = 0;
        while (lo < n) {
            size_t mid = run_end(ev, src, lo, n);
            size_t hi = mid < n ? run_end(ev, src, mid, n) : n;
            merge(ev, src, dst, lo, mid, hi);
            lo = hi;
            runs++;
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
        if (runs <= 1)
            break;
    }
    if (src != order)
        memcpy(order, src, n * sizeof *order);
}

void bt_gather(const struct trace_event *ev, const uint32_t *order, size_t n,
               struct trace_event *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = ev[order[i]];
}
