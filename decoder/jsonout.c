/* jsonout.c — Chrome Trace Event JSON records from records (jsonout.h). */
#include "decoder/jsonout.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include "decoder/pairs.h"
#include "decoder/putnum.h"

#define ROLE_INSTANT   0xffffffffu      /* not a half of a slice */
#define ROLE_END       0xfffffffeu      /* a slice's END: shown by its BEGIN */
#define ROLE_UNMATCHED 0xfffffffdu      /* a half without a partner */
#define JS_EXACT       (1ull << 53)     /* JSON viewers' doubles are exact below */
#define DOUBLE_EXACT   (1ull << 53)     /* integers a double holds exactly, up to */
#define SEP            ",\n"
#define UNMATCHED      "\"unmatched\":true}"

const struct bt_json_pair *bt_json_find_pair(const struct bt_json_pair *pairs, size_t n,
                                             uint32_t b, uint32_t e)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct bt_json_pair *p = &pairs[mid];
        if (p->begin == b && p->end == e)
            return p;
        if (p->begin < b || (p->begin == b && p->end < e))
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const struct bt_json_pair *pair_of(const struct bt_json *j, uint32_t b, uint32_t e)
{
    return bt_json_find_pair(j->pairs, j->npairs, b, e);
}

/* c->role from the pairing's slices and unmatched halves; false when a
 * slice's (BEGIN type, END type) has no format. */
static bool set_roles(const struct bt_json *j, struct bt_json_cpu *c, const uint32_t *begins,
                      const uint32_t *ends, size_t nslices, const uint32_t *unmatched,
                      size_t nunmatched)
{
    for (size_t i = 0; i < c->n; i++)
        c->role[i] = ROLE_INSTANT;
    for (size_t k = 0; k < nslices; k++) {
        if (!pair_of(j, c->ev[begins[k]].type, c->ev[ends[k]].type))
            return false;
        c->role[begins[k]] = ends[k];
        c->role[ends[k]] = ROLE_END;
    }
    for (size_t k = 0; k < nunmatched; k++)
        c->role[unmatched[k]] = ROLE_UNMATCHED;
    return true;
}

long bt_json_pair(const struct bt_json *j, struct bt_json_cpu *c,
                  const struct pairing_role *roles, uint32_t nroles)
{
    struct bt_pairing r;
    if (!bt_pair_run(roles, nroles, c->ev, c->n, &r))
        return -1;
    long out = set_roles(j, c, r.begins, r.ends, r.nslices, r.unmatched, r.nunmatched)
                   ? (long)r.nunmatched
                   : -1;
    bt_pair_free(&r);
    return out;
}

/* |v| written as Python's f'{v:#x}' writes it, without the sign. */
static char *put_hex(char *p, unsigned __int128 u)
{
    char tmp[32];
    unsigned n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[(unsigned)(u & 15)];
        u >>= 4;
    } while (u);
    *p++ = '0';
    *p++ = 'x';
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* One argument value as argfmt.make_formatter(..., 'json', signed) shows it. */
static char *put_value(const struct bt_json *j, uint64_t raw, bool sgn, bool phase, char *p)
{
    __int128 v = sgn ? (__int128)(int64_t)raw : (__int128)raw;
    if (v >= (__int128)JS_EXACT || v <= -(__int128)JS_EXACT) {
        *p++ = '"';
        if (v < 0)
            *p++ = '-';
        p = put_hex(p, v < 0 ? (unsigned __int128)-v : (unsigned __int128)v);
        *p++ = '"';
        return p;
    }
    const char *name = phase && v >= 0 ? bt_phase_name(j->phases, j->nphases, (uint64_t)v) : NULL;
    if (name)
        return bt_put_str(p, name);
    return v < 0 ? bt_put_i128(p, v) : bt_put_u64(p, (uint64_t)v);
}

/* The args object of values vals[] ("{}" without fields); its closing
 * brace is left off when `open` (the caller adds "unmatched"). */
static char *put_args(const struct bt_json *j, const struct bt_json_fmt *f,
                      const uint64_t *vals, bool open, char *p)
{
    *p++ = '{';
    for (uint32_t k = 0; k < f->nfields; k++) {
        p = bt_put_str(p, f->label[k]);
        p = put_value(j, vals[f->arg[k]], f->sgn[k], f->phase[k], p);
    }
    if (!open)
        *p++ = '}';
    else if (f->nfields)
        *p++ = ',';
    return p;
}

/* "045": three decimals. */
static char *put_frac3(char *p, unsigned frac)
{
    *p++ = (char)('0' + frac / 100);
    *p++ = (char)('0' + frac / 10 % 10);
    *p++ = (char)('0' + frac % 10);
    return p;
}

/* export_json's us_text(ns): "12.345". */
static char *put_us(char *p, __int128 ns)
{
    if (ns >= 0 && ns <= (__int128)UINT64_MAX) {     /* no 128-bit division */
        p = bt_put_u64(p, (uint64_t)ns / 1000);
        *p++ = '.';
        return put_frac3(p, (unsigned)((uint64_t)ns % 1000));
    }
    __int128 us = bt_floordiv(ns, 1000);
    p = bt_put_i128(p, us);
    *p++ = '.';
    return put_frac3(p, (unsigned)(ns - us * 1000));
}

static char *put_tail(char *p, uint64_t cpu)
{
    p = bt_put_str(p, ",\"pid\":0,\"tid\":");
    p = bt_put_u64(p, cpu);
    return bt_put_str(p, ",\"args\":");
}

static char *instant(const struct bt_json *j, const struct trace_event *ev, uint64_t cpu,
                     bool unmatched, char *p)
{
    const struct bt_json_fmt *f = &j->fmts[j->type_index[ev->type]];
    uint64_t vals[2] = { ev->a0, ev->a1 };
    p = bt_put_str(p, f->head);
    p = put_tail(put_us(p, bt_ns_of(ev->tsc, j->t0, j->hz)), cpu);
    p = put_args(j, f, vals, unmatched, p);
    if (unmatched)
        p = bt_put_str(p, UNMATCHED);
    *p++ = '}';
    return p;
}

static char *slice(const struct bt_json *j, const struct trace_event *b,
                   const struct trace_event *e, uint64_t cpu, char *p)
{
    const struct bt_json_fmt *f = &j->fmts[pair_of(j, b->type, e->type)->fmt];
    uint64_t vals[4] = { b->a0, b->a1, e->a0, e->a1 };
    __int128 begin = bt_ns_of(b->tsc, j->t0, j->hz);
    p = put_us(bt_put_str(p, f->head), begin);
    p = bt_put_str(p, ",\"dur\":");
    p = put_tail(put_us(p, bt_ns_of(e->tsc, j->t0, j->hz) - begin), cpu);
    p = put_args(j, f, vals, false, p);
    *p++ = '}';
    return p;
}

static unsigned bit_length(unsigned __int128 v)
{
    uint64_t hi = (uint64_t)(v >> 64), lo = (uint64_t)v;
    return hi ? 128u - (unsigned)__builtin_clzll(hi) : lo ? 64u - (unsigned)__builtin_clzll(lo)
                                                          : 0;
}

/* Python's hz / ticks: the double nearest the exact quotient, ties to
 * even. One IEEE division is that when both are exact doubles; else the
 * quotient q = floor(hz * 2^64 / ticks) and its remainder are rounded to
 * 53 bits by hand. Quotients below 2^-11 print as 0.000 whatever their
 * double: 0 stands for them. */
static double rate(uint64_t hz, uint64_t ticks)
{
    if (hz <= DOUBLE_EXACT && ticks <= DOUBLE_EXACT)
        return (double)hz / (double)ticks;
    if (((unsigned __int128)hz << 11) < ticks)
        return 0;
    unsigned __int128 n = (unsigned __int128)hz << 64, q = n / ticks;
    unsigned shift = bit_length(q) - 53;             /* q >= 2^53: shift >= 1 */
    unsigned __int128 rest = q & (((unsigned __int128)1 << shift) - 1);
    unsigned __int128 half = (unsigned __int128)1 << (shift - 1);
    uint64_t mant = (uint64_t)(q >> shift), bits;
    if (rest > half || (rest == half && (n % ticks != 0 || (mant & 1))))
        mant++;
    unsigned exp = 1011 + shift;                     /* 1023 + 52 + shift - 64 */
    if (mant >> 53) {
        mant >>= 1;
        exp++;
    }
    bits = (uint64_t)exp << 52 | (mant & ((1ull << 52) - 1));
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* x as printf("%.3f") (and Python's f'{x:.3f}') writes it: the exact
 * binary value rounded half-even to three decimals. Done by hand below
 * 2^53 (x = m / 2^s, m < 2^53: m * 1000 fits in 64 bits); printf is
 * several times slower and stays for the rest. */
static char *put_fixed3(char *p, double x)
{
    uint64_t bits, q;
    memcpy(&bits, &x, sizeof bits);
    unsigned exp = (unsigned)(bits >> 52) & 0x7ff;
    if (bits >> 63 || !(x < (double)DOUBLE_EXACT))
        return p + sprintf(p, "%.3f", x);
    uint64_t m = (bits & ((1ull << 52) - 1)) | (exp ? 1ull << 52 : 0);
    unsigned s = exp ? 1075 - exp : 1074;
    uint64_t n = m * 1000;
    if (s == 0) {
        q = n;
    } else if (s >= 64) {
        q = 0;                       /* n < 2^63 <= half of 2^s */
    } else {
        uint64_t rem = n & ((1ull << s) - 1), half = 1ull << (s - 1);
        q = (n >> s) + (rem > half || (rem == half && (n >> s) & 1));
    }
    p = bt_put_u64(p, q / 1000);
    *p++ = '.';
    return put_frac3(p, (unsigned)(q % 1000));
}

static char *counter(const struct bt_json *j, const struct bt_json_cpu *c, uint64_t tsc,
                     uint64_t ticks, char *p)
{
    p = bt_put_str(p, SEP "{\"name\":\"tick rate CPU ");
    p = bt_put_u64(p, c->cpu);
    p = bt_put_str(p, "\",\"ph\":\"C\",\"ts\":");
    p = put_us(p, bt_ns_of(tsc, j->t0, j->hz));
    p = bt_put_str(p, ",\"pid\":0,\"args\":{\"Hz\":");
    p = put_fixed3(p, rate(j->hz, ticks));
    return bt_put_str(p, "}}");
}

/* The caller's marker text of position `at`, if any. */
static char *marks(struct bt_json_cpu *c, size_t at, char *p)
{
    while (c->mark_at < c->nmarks && c->marks[c->mark_at].at < at)
        c->mark_at++;
    if (c->mark_at < c->nmarks && c->marks[c->mark_at].at == at)
        p = bt_put_str(bt_put_str(p, SEP), c->marks[c->mark_at++].text);
    return p;
}

static char *event(const struct bt_json *j, struct bt_json_cpu *c, size_t i, char *p)
{
    const struct trace_event *ev = &c->ev[i];
    uint32_t role = c->role[i];
    p = marks(c, i, p);
    if (role != ROLE_END) {
        p = bt_put_str(p, SEP);
        p = role < ROLE_UNMATCHED ? slice(j, ev, &c->ev[role], c->cpu, p)
                                  : instant(j, ev, c->cpu, role == ROLE_UNMATCHED, p);
    }
    if (ev->type == j->timer) {
        if (c->have_tick && ev->tsc > c->prev_tick)
            p = counter(j, c, ev->tsc, ev->tsc - c->prev_tick, p);
        c->prev_tick = ev->tsc;
        c->have_tick = 1;
    }
    return p;
}

size_t bt_json_rows(const struct bt_json *j, struct bt_json_cpu *c, char *out, size_t cap)
{
    char *p = out, *end = out + cap;
    while (c->at < c->n && (size_t)(end - p) >= j->row_max)
        p = event(j, c, c->at++, p);
    if (c->at == c->n && c->n && (size_t)(end - p) >= j->row_max)
        p = marks(c, c->n, p);           /* a hole after the last event */
    return (size_t)(p - out);
}
