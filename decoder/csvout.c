/* csvout.c — CSV rows from records (csvout.h). */
#include "decoder/csvout.h"
#include <stdbool.h>
#include "decoder/putnum.h"

const char *bt_phase_name(const struct bt_phase *phases, size_t n, uint64_t v)
{
    for (size_t i = 0; i < n; i++)
        if (phases[i].value == v)
            return phases[i].name;
    return NULL;
}

char *bt_csv_args(const struct bt_csv *c, const struct bt_csv_type *t,
                  const struct trace_event *ev, char *p)
{
    for (uint32_t f = 0; f < t->nfields; f++) {
        uint64_t v = t->arg[f] ? ev->a1 : ev->a0;
        bool negative = t->sgn[f] && (int64_t)v < 0;
        p = bt_put_str(p, t->label[f]);
        const char *name = t->phase[f] && !negative ? bt_phase_name(c->phases, c->nphases, v) : NULL;
        if (name)
            p = bt_put_str(p, name);
        else
            p = negative ? bt_put_i128(p, (int64_t)v) : bt_put_u64(p, v);
    }
    return p;
}

/* text as one CSV field: quoted (quotes doubled) only when needed. */
static bool needs_quotes(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r')
            return true;
    return false;
}

static char *put_field(char *p, const char *s, size_t n)
{
    if (!needs_quotes(s, n)) {
        memcpy(p, s, n);
        return p + n;
    }
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            *p++ = '"';
        *p++ = s[i];
    }
    *p++ = '"';
    return p;
}

static char *row(const struct bt_csv *c, const struct trace_event *ev, uint32_t cpu, char *p)
{
    const struct bt_csv_type *t = &c->types[c->type_index[ev->type]];
    char args[BT_CSV_ARGS_MAX];
    p = bt_put_u64(p, cpu);
    *p++ = ',';
    p = bt_put_u64(p, ev->seq);
    *p++ = ',';
    p = bt_put_u64(p, ev->tsc);
    *p++ = ',';
    p = bt_put_i128(p, bt_ns_of(ev->tsc, c->t0, c->hz));
    *p++ = ',';
    p = bt_put_u64(p, ev->type);
    *p++ = ',';
    p = bt_put_str(p, t->name);
    *p++ = ',';
    p = bt_put_u64(p, ev->flags);
    *p++ = ',';
    p = bt_put_u64(p, ev->a0);
    *p++ = ',';
    p = bt_put_u64(p, ev->a1);
    *p++ = ',';
    p = put_field(p, args, (size_t)(bt_csv_args(c, t, ev, args) - args));
    *p++ = '\n';
    return p;
}

size_t bt_csv_rows(const struct bt_csv *c, const struct trace_event *ev, const uint32_t *cpu,
                   size_t n, char *out, size_t cap, size_t *done)
{
    char *p = out, *end = out + cap;
    size_t i = 0;
    for (; i < n && (size_t)(end - p) >= c->row_max; i++)
        p = row(c, &ev[i], cpu ? cpu[i] : ev[i].cpu, p);
    *done = i;
    return (size_t)(p - out);
}
