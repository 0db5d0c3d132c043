/* median.c — see median.h. */
#include "lib/median.h"

void sort_u64(uint64_t *v, unsigned n)
{
    for (unsigned i = 1; i < n; i++) {
        uint64_t x = v[i];
        unsigned j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

uint64_t median_u64(uint64_t *v, unsigned n)
{
    if (n == 0)
        return 0;
    sort_u64(v, n);
    if (n & 1)
        return v[n / 2];
    uint64_t a = v[n / 2 - 1], b = v[n / 2];
    return a + (b - a) / 2;
}

uint64_t min_u64(const uint64_t *v, unsigned n)
{
    uint64_t m = n ? v[0] : 0;
    for (unsigned i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}
