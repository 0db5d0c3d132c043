/* csvout.c — CSV rows from records (csvout.h). */
#include <stdbool.h>
#include <string.h>
#include "host/csvout.h"

#define NS_PER_S 1000000000u
#define ARGS_MAX 2048            /* one row's args text, before quoting */

static char *put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

static char *put_u64(char *p, uint64_t v)
{
    char tmp[20];
    unsigned n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static char *put_i128(char *p, __int128 v)
{
    unsigned __int128 u = v < 0 ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
    char tmp[40];
    unsigned n = 0;
    if (v < 0)
        *p++ = '-';
    do {
        tmp[n++] = (char)('0' + (unsigned)(u % 10));
        u /= 10;
    } while (u);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* Python's (tsc - t0) * NS_PER_S // hz: floor division. */
static __int128 ns_of(uint64_t tsc, uint64_t t0, uint64_t hz)
{
    __int128 num = ((__int128)tsc - (__int128)t0) * NS_PER_S;
    __int128 q = num / (__int128)hz;
    if (num % (__int128)hz != 0 && num < 0)
        q--;
    return q;
}

static const char *phase_name(const struct bt_csv *c, uint64_t v)
{
    for (size_t i = 0; i < c->nphases; i++)
        if (c->phases[i].value == v)
            return c->phases[i].name;
    return NULL;
}

/* The args text of ev into buf; returns its end. */
static char *args_text(const struct bt_csv *c, const struct bt_csv_type *t,
                       const struct trace_event *ev, char *p)
{
    for (uint32_t f = 0; f < t->nfields; f++) {
        uint64_t v = t->arg[f] ? ev->a1 : ev->a0;
        bool negative = t->sgn[f] && (int64_t)v < 0;
        p = put_str(p, t->label[f]);
        const char *name = t->phase[f] && !negative ? phase_name(c, v) : NULL;
        if (name)
            p = put_str(p, name);
        else
            p = negative ? put_i128(p, (int64_t)v) : put_u64(p, v);
    }
    return p;
}

/* text as one CSV field: quoted (quotes doubled) only when needed. */
static char *put_field(char *p, const char *s, size_t n)
{
    if (!memchr(s, ',', n) && !memchr(s, '"', n) && !memchr(s, '\n', n) &&
        !memchr(s, '\r', n)) {
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

static char *row(const struct bt_csv *c, const struct trace_event *ev, char *p)
{
    const struct bt_csv_type *t = &c->types[c->type_index[ev->type]];
    char args[ARGS_MAX];
    p = put_u64(p, ev->cpu);
    *p++ = ',';
    p = put_u64(p, ev->seq);
    *p++ = ',';
    p = put_u64(p, ev->tsc);
    *p++ = ',';
    p = put_i128(p, ns_of(ev->tsc, c->t0, c->hz));
    *p++ = ',';
    p = put_u64(p, ev->type);
    *p++ = ',';
    p = put_str(p, t->name);
    *p++ = ',';
    p = put_u64(p, ev->flags);
    *p++ = ',';
    p = put_u64(p, ev->a0);
    *p++ = ',';
    p = put_u64(p, ev->a1);
    *p++ = ',';
    p = put_field(p, args, (size_t)(args_text(c, t, ev, args) - args));
    *p++ = '\n';
    return p;
}

size_t bt_csv_rows(const struct bt_csv *c, const struct trace_event *ev, size_t n,
                   char *out, size_t cap, size_t *done)
{
    char *p = out, *end = out + cap;
    size_t i = 0;
    while (i < n && (size_t)(end - p) >= c->row_max)
        p = row(c, &ev[i++], p);
    *done = i;
    return (size_t)(p - out);
}
