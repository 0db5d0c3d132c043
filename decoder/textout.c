/* textout.c — text timeline rows from records (textout.h). */
#include "decoder/textout.h"
#include "decoder/putnum.h"

/* v right-aligned in a field of width w (Python's f'{v:>{w}}'). */
static char *put_right(char *p, __int128 v, uint32_t w)
{
    char tmp[48];
    size_t n = (size_t)(bt_put_i128(tmp, v) - tmp);
    while (w > n) {
        *p++ = ' ';
        w--;
    }
    memcpy(p, tmp, n);
    return p + n;
}

/* "  12.345    3  ": the event's time and CPU columns. */
static char *time_cpu(const struct bt_text *x, const struct trace_event *ev, uint32_t cpu,
                      char *p)
{
    __int128 d = bt_ns_of(ev->tsc, x->table->t0, x->table->hz);
    __int128 us = d >= 0 && d <= (__int128)UINT64_MAX ? (__int128)((uint64_t)d / 1000)
                                                      : bt_floordiv(d, 1000);
    unsigned frac = (unsigned)(d - us * 1000);
    p = put_right(p, us, x->int_w);
    *p++ = '.';
    *p++ = (char)('0' + frac / 100);
    *p++ = (char)('0' + frac / 10 % 10);
    *p++ = (char)('0' + frac % 10);
    *p++ = ' ';
    *p++ = ' ';
    p = put_right(p, cpu, x->cpu_w);
    *p++ = ' ';
    *p++ = ' ';
    return p;
}

/* The marker of (cpu, seq), or NULL. */
static const struct bt_marker *marker_of(const struct bt_text *x, uint64_t cpu, uint64_t seq)
{
    size_t lo = 0, hi = x->nmarkers;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct bt_marker *m = &x->markers[mid];
        if (m->cpu == cpu && m->seq == seq)
            return m;
        if (m->cpu < cpu || (m->cpu == cpu && m->seq < seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static char *row(const struct bt_text *x, const struct trace_event *ev, uint32_t cpu, char *p)
{
    const struct bt_csv *c = x->table;
    const struct bt_csv_type *t = &c->types[c->type_index[ev->type]];
    const struct bt_marker *m = x->nmarkers ? marker_of(x, cpu, ev->seq) : NULL;
    if (m && m->before)
        p = bt_put_str(time_cpu(x, ev, cpu, p), m->before);
    p = bt_put_str(time_cpu(x, ev, cpu, p), t->name);
    p = bt_csv_args(c, t, ev, p);
    *p++ = '\n';
    if (m && m->after)
        p = bt_put_str(time_cpu(x, ev, cpu, p), m->after);
    return p;
}

size_t bt_text_rows(const struct bt_text *x, const struct trace_event *ev, const uint32_t *cpu,
                    size_t n, char *out, size_t cap, size_t *done)
{
    char *p = out, *end = out + cap;
    size_t i = 0;
    for (; i < n && (size_t)(end - p) >= x->row_max; i++)
        p = row(x, &ev[i], cpu ? cpu[i] : ev[i].cpu, p);
    *done = i;
    return (size_t)(p - out);
}
