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

void pairing_reset(struct pairing *p)
{
    for (unsigned k = 0; k < p->depth; k++)
        give_up(p, p->open[k].index);
    p->depth = 0;
}

/* Takes open[k] off the stack; the BEGINs above it stay open, in order. */
static void take(struct pairing *p, unsigned k)
{
    for (unsigned j = k + 1; j < p->depth; j++)
        p->open[j - 1] = p->open[j];
    p->depth--;
}

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
        struct pairing_open found = p->open[k];
        take(p, k);                            /* the BEGINs above it may cross it */
        if (ev->tsc < found.tsc) {             /* an END before its BEGIN */
            give_up(p, found.index);
            give_up(p, index);
            return false;
        }
        *begin = found;
        return true;
    }
    give_up(p, index);
    return false;
}
