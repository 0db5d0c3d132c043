/* pairs.c — one CPU's slices and unmatched halves by recorder/pairing.c (pairs.h). */
#include "decoder/pairs.h"
#include <stdlib.h>
#include <string.h>

/* Marks in the scratch array, one per event: nothing, given up, or (a
 * BEGIN that was closed) its END's index + 1. */
#define MARK_NONE     0u
#define MARK_GIVEN_UP 0xFFFFFFFFu

static void mark_given_up(void *ctx, uint32_t index) { ((uint32_t *)ctx)[index] = MARK_GIVEN_UP; }

size_t bt_pair_cpu(const struct pairing_role *roles, uint32_t nroles,
                   const struct trace_event *ev, size_t n, uint32_t *begins, uint32_t *ends,
                   uint32_t *unmatched, size_t *nunmatched)
{
    uint32_t *mark = unmatched;
    struct pairing p;
    struct pairing_open begin;
    memset(mark, 0, n * sizeof *mark);
    pairing_init(&p, roles, nroles, mark_given_up, mark);
    for (uint32_t i = 0; i < n; i++)
        if (pairing_feed(&p, &ev[i], i, &begin))
            mark[begin.index] = i + 1;
    pairing_reset(&p);                          /* the BEGINs still open */
    /* In ring order: a closed BEGIN is a slice, a mark is unmatched. The
     * unmatched indices overwrite marks already read (nu <= i). */
    size_t ns = 0, nu = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t m = mark[i];
        if (m == MARK_GIVEN_UP) {
            unmatched[nu++] = i;
        } else if (m != MARK_NONE) {
            begins[ns] = i;
            ends[ns++] = m - 1;
        }
    }
    *nunmatched = nu;
    return ns;
}

_Bool bt_pair_run(const struct pairing_role *roles, uint32_t nroles,
                  const struct trace_event *ev, size_t n, struct bt_pairing *out)
{
    if (n > BT_PAIR_MAX_EVENTS)
        return 0;
    size_t half = n / 2 + 1;
    out->begins = malloc(half * sizeof *out->begins);
    out->ends = malloc(half * sizeof *out->ends);
    out->unmatched = malloc((n + 1) * sizeof *out->unmatched);
    if (!out->begins || !out->ends || !out->unmatched) {
        bt_pair_free(out);
        return 0;
    }
    out->nslices = bt_pair_cpu(roles, nroles, ev, n, out->begins, out->ends, out->unmatched,
                               &out->nunmatched);
    return 1;
}

void bt_pair_free(struct bt_pairing *p)
{
    free(p->begins);
    free(p->ends);
    free(p->unmatched);
    p->begins = p->ends = p->unmatched = NULL;
}
