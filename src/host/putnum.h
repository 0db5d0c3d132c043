/* putnum.h — number and string writers shared by the host exporters
 * (csvout.c, textout.c): each appends to a char buffer and returns the
 * new end; the caller guarantees the room. Numbers are written as
 * Python's str() writes them, and ns_of() is Python's floor division. */
#ifndef HOST_PUTNUM_H
#define HOST_PUTNUM_H
#include <stdint.h>
#include <string.h>

#define BT_NS_PER_S 1000000000u

static inline char *bt_put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

static inline char *bt_put_u64(char *p, uint64_t v)
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

static inline char *bt_put_i128(char *p, __int128 v)
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

/* Python's a // b (b > 0): rounded toward minus infinity. */
static inline __int128 bt_floordiv(__int128 a, __int128 b)
{
    __int128 q = a / b;
    if (a % b != 0 && a < 0)
        q--;
    return q;
}

/* Python's (tsc - t0) * NS_PER_S // hz. */
static inline __int128 bt_ns_of(uint64_t tsc, uint64_t t0, uint64_t hz)
{
    return bt_floordiv(((__int128)tsc - (__int128)t0) * BT_NS_PER_S, (__int128)hz);
}

#endif
