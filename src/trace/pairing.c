/* pairing.c — BEGIN/END events into durations by the one nesting rule. */
#include "trace/pairing.h"
#include "trace/schema.h"
#include "trace/trace.h"

void pairing_reset(struct pairing *p) { p->depth = 0; }

static void push(struct pairing *p, const struct trace_event *ev)
{
    if (p->depth == PAIRING_DEPTH) {            /* give up the oldest */
        for (unsigned k = 1; k < PAIRING_DEPTH; k++)
            p->open[k - 1] = p->open[k];
        p->depth--;
    }
    p->open[p->depth].begin = ev->type;
    p->open[p->depth].a0 = ev->a0;
    p->open[p->depth].tsc = ev->tsc;
    p->depth++;
}

bool pairing_feed(struct pairing *p, const struct trace_event *ev, uint16_t *begin,
                  uint64_t *ticks)
{
    const struct trace_event_info *info = trace_event_info(ev->type);
    uint16_t partner = trace_pair_of(ev->type);
    if (!info || !partner)
        return false;
    if (info->kind == TRACE_KIND_BEGIN) {
        push(p, ev);
        return false;
    }
    for (unsigned k = p->depth; k-- > 0;) {
        if (p->open[k].begin != partner || p->open[k].a0 != ev->a0)
            continue;
        p->depth = k;                           /* it and the BEGINs above it */
        if (ev->tsc < p->open[k].tsc)
            return false;
        *begin = partner;
        *ticks = ev->tsc - p->open[k].tsc;
        return true;
    }
    return false;
}
