/* kstring.c — freestanding memory and string routines. */
#include "lib/kstring.h"
#include <stdint.h>

void *memcpy(void *dst, const void *src, size_t n)
{
    void *d = dst;
    size_t words = n / 8, bytes = n % 8;
    /* Eight bytes per step: much faster under emulation (TCG) and never
     * slower on hardware than byte moves. */
    __asm__ volatile("rep movsq" : "+D"(d), "+S"(src), "+c"(words)::"memory");
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(bytes)::"memory");
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d < s || d >= s + n) {
        while (n--) *d++ = *s++;
    } else {
        while (n--) d[n] = s[n];
    }
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    void *d = dst;
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] - y[i];
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i] != b[i]) return (unsigned char)a[i] - (unsigned char)b[i];
        if (!a[i]) return 0;
    }
    return 0;
}

int strcmp(const char *a, const char *b)
{
    while (*a && *a == *b) a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}
