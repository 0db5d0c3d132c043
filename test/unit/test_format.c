/* test_format.c — the kernel's snprintf against the C library's. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "lib/format.h"

#define SAME(...)                                                          \
    do {                                                                   \
        char a[128], b[128];                                               \
        int na = ksnprintf(a, sizeof a, __VA_ARGS__);                      \
        int nb = snprintf(b, sizeof b, __VA_ARGS__);                       \
        CHECK(!strcmp(a, b));                                              \
        CHECK_EQ(na, nb);                                                  \
        if (strcmp(a, b)) fprintf(stderr, "  got '%s' want '%s'\n", a, b); \
    } while (0)

int main(void)
{
    SAME("%d %i %u", -42, 7, 3000000000u);
    SAME("%5d|%-5d|%05d", 42, 42, -42);
    SAME("%x %X %lx %016lx", 0xbeefu, 0xbeefu, 0xdeadbeefcafeul, 0x1ul);
    SAME("%lu %ld", UINT64_MAX, INT64_MIN);
    SAME("%s|%10s|%-10s|%.3s|%.*s", "abc", "abc", "abc", "abcdef", 2, "xyz");
    SAME("%c%c 100%%", 'o', 'k');
    SAME("%o %zu", 8u, (size_t)12345);
    SAME("%*d", 6, 12);
    char small[5];
    int n = ksnprintf(small, sizeof small, "%s", "truncated");
    CHECK_EQ(n, 9);
    CHECK(!strcmp(small, "trun"));
    /* kappendf: pieces that overflow are cut, and the length never passes
     * the buffer (a loop of appends cannot write past it). */
    char row[12];
    size_t at = kappendf(row, sizeof row, 0, "%s", "ticks");
    CHECK_EQ(at, 5);
    at = kappendf(row, sizeof row, at, " %6ld", 20530263L);
    CHECK_EQ(at, sizeof row - 1);
    CHECK(!strcmp(row, "ticks 20530"));
    for (int i = 0; i < 4; i++)
        at = kappendf(row, sizeof row, at, " %d", i);
    CHECK_EQ(at, sizeof row - 1);
    CHECK(!strcmp(row, "ticks 20530"));
    CHECK_EQ(kappendf(row, sizeof row, 99, "x"), sizeof row - 1);
    return check_summary("test_format");
}
