/* pairing.c — BEGIN/END events into durations by the one nesting rule. */
#include "recorder/pairing.h"

void pairing_init(struct pairing *p, const struct pairing_role *roles, uint32_t nroles,
                  void (*given_up)(void *ctx, uint32_t index), void *ctx)
{
    p->roles = roles;
    p->nroles = nroles;
    p->given_up = given_up;
    p->ctx = ctx;
    p->depth = 0;
}

static void give_up(struct pairing *p, uint32_t index)
{
    if (p->given_up)
        p->given_up(p->ctx, index);
}

/* Gives up open[from..depth), the top of the stack. */
static void give_up_above(struct pairing *p, unsigned from)
{
    for (unsigned k = from; k < p->depth; k++)
        give_up(p, p->open[k].index);
    p->depth = from;
}

void pairing_reset(struct pairing *p) { give_up_above(p, 0); }

static void push(struct pairing *p, const struct trace_event *ev, uint32_t index, uint32_t key)
{
    if (p->depth == PAIRING_DEPTH) {            /* give up the oldest */
        give_up(p, p->open[0].index);
        for (unsigned k = 1; k < PAIRING_DEPTH; k++)
            p->open[k - 1] = p->open[k];
        p->depth--;
    }
    p->open[p->depth] = (struct pairing_open){ .a0 = ev->a0, .tsc = ev->tsc, .index = index, .key = key, .type = ev->type };
    p->depth++;
}

bool pairing_feed(struct pairing *p, const struct trace_event *ev, uint32_t index,
                  struct pairing_open *begin)
{
    if (ev->type >= p->nroles)
        return false;
    struct pairing_role role = p->roles[ev->type];
    if (role.kind == TRACE_KIND_BEGIN) {
        push(p, ev, index, role.key);
        return false;
    }
    if (role.kind != TRACE_KIND_END)
        return false;
    for (unsigned k = p->depth; k-- > 0;) {    /* innermost first */
        if (p->open[k].key != role.key || p->open[k].a0 != ev->a0)
            continue;
        give_up_above(p, k + 1);               /* the BEGINs above it */
        p->depth = k;
        if (ev->tsc < p->open[k].tsc) {        /* an END before its BEGIN */
            give_up(p, p->open[k].index);
            give_up(p, index);
            return false;
        }
        *begin = p->open[k];
        return true;
    }
    give_up(p, index);
    return false;
}
