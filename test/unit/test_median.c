/* test_median.c — sort_u64 and median_u64 (src/lib/median.c). */
#include <stdlib.h>
#include "check.h"
#include "lib/median.h"

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    uint64_t none[1] = { 7 };
    CHECK_EQ(median_u64(none, 0), 0);
    uint64_t one[] = { 42 };
    CHECK_EQ(median_u64(one, 1), 42);
    uint64_t odd[] = { 9, 1, 5, 3, 7 };
    CHECK_EQ(median_u64(odd, 5), 5);
    CHECK(odd[0] == 1 && odd[4] == 9);                    /* sorted in place */
    uint64_t even[] = { 10, 2, 8, 4 };
    CHECK_EQ(median_u64(even, 4), 6);                     /* (4 + 8) / 2 */
    uint64_t big[] = { UINT64_MAX, UINT64_MAX - 2 };
    CHECK_EQ(median_u64(big, 2), UINT64_MAX - 1);         /* no overflow */
    CHECK_EQ(min_u64(none, 0), 0);
    const uint64_t mins[] = { 9, 4, 7, 4, 12 };
    CHECK_EQ(min_u64(mins, 5), 4);
    CHECK_EQ(min_u64(mins, 1), 9);
    uint64_t dup[] = { 3, 3, 3, 1, 3 };
    CHECK_EQ(median_u64(dup, 5), 3);

    /* Random arrays against qsort. */
    srand(1);
    for (int round = 0; round < 200; round++) {
        uint64_t a[97], b[97];
        unsigned n = (unsigned)(rand() % 97) + 1;
        for (unsigned i = 0; i < n; i++)
            a[i] = b[i] = (uint64_t)rand() % 50;          /* many duplicates */
        sort_u64(a, n);
        qsort(b, n, sizeof b[0], cmp);
        unsigned diff = 0;
        for (unsigned i = 0; i < n; i++)
            diff += a[i] != b[i];
        CHECK_EQ(diff, 0);
    }
    return check_summary("test_median");
}
