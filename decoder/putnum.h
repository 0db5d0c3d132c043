/* putnum.h — number and string writers shared by the host exporters
 * (csvout.c, textout.c): each appends to a char buffer and returns the
 * new end; the caller guarantees the room. Numbers are written as
 * Python's str() writes them, and ns_of() is Python's floor division. */
#ifndef DECODER_PUTNUM_H
#define DECODER_PUTNUM_H
#include <stdint.h>
#include <string.h>

#define BT_NS_PER_S 1000000000u

static inline char *bt_put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

/* "00" "01" ... "99": two digits per division. */
static const char bt_digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* How many decimal digits v takes. */
static inline unsigned bt_digits(uint64_t v)
{
    unsigned n = 1;
    for (uint64_t limit = 10; n < 20 && v >= limit; limit *= 10)
        n++;
    return n;
}

static inline char *bt_put_u64(char *p, uint64_t v)
{
    char *end = p + bt_digits(v), *q = end;
    while (v >= 100) {                     /* two digits at a time, from the right */
        unsigned pair = (unsigned)(v % 100);
        v /= 100;
        *--q = bt_digit_pairs[2 * pair + 1];
        *--q = bt_digit_pairs[2 * pair];
    }
    if (v >= 10) {
        *--q = bt_digit_pairs[2 * v + 1];
        *--q = bt_digit_pairs[2 * v];
    } else {
        *--q = (char)('0' + v);
    }
    return end;
}

static inline char *bt_put_i128(char *p, __int128 v)
{
    if (v >= 0 && v <= (__int128)UINT64_MAX)       /* the usual case: no 128-bit divisions */
        return bt_put_u64(p, (uint64_t)v);
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

/* Python's (tsc - t0) * NS_PER_S // hz. With d = q * hz + r (tsc >= t0)
 * that is q * NS_PER_S + r * NS_PER_S // hz, in 64 bits when it fits. */
static inline __int128 bt_ns_of(uint64_t tsc, uint64_t t0, uint64_t hz)
{
    if (tsc >= t0 && hz <= UINT64_MAX / BT_NS_PER_S) {
        uint64_t d = tsc - t0, q = d / hz, r = d % hz;
        if (q <= (UINT64_MAX - BT_NS_PER_S) / BT_NS_PER_S)
            return (__int128)(q * BT_NS_PER_S + r * BT_NS_PER_S / hz);
    }
    return bt_floordiv(((__int128)tsc - (__int128)t0) * BT_NS_PER_S, (__int128)hz);
}

#endif
