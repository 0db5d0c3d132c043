/* test_stresssum.c — the stress checksum (src/perf/stresssum.h): known
 * answers shared with scripts/btlib/workloads.py (test/host/test_report.py
 * checks the same four), and that every field it covers changes it. */
#include "check.h"
#include "perf/stresssum.h"

struct answer {
    uint64_t tsc;
    uint16_t type;
    uint8_t cpu, flags;
    uint64_t a0, sum;
};

static const struct answer answers[] = {
    { 0, 0, 0, 0, 0, 0x33fe8bd4f9c57863ull },
    { 0x123456789abcdef0ull, 28, 5, 0, 41, 0x89ced4b761c096f0ull },
    { UINT64_MAX, 29, 255, 255, UINT64_MAX, 0xc5f91294dc1fb446ull },
    { 1000, 28, 0, 3, 7, 0x30c7415704f4d2f9ull },
};

int main(void)
{
    for (unsigned i = 0; i < sizeof answers / sizeof answers[0]; i++) {
        const struct answer *a = &answers[i];
        CHECK_EQ(stress_checksum(a->tsc, a->type, a->cpu, a->flags, a->a0), a->sum);
    }
    /* Any single-bit change of any covered field changes the sum. */
    uint64_t base = stress_checksum(1000, 28, 3, 2, 77);
    unsigned same = 0;
    for (unsigned bit = 0; bit < 64; bit++) {
        same += stress_checksum(1000 ^ (1ull << bit), 28, 3, 2, 77) == base;
        same += stress_checksum(1000, 28, 3, 2, 77 ^ (1ull << bit)) == base;
    }
    for (unsigned bit = 0; bit < 16; bit++)
        same += stress_checksum(1000, (uint16_t)(28 ^ (1u << bit)), 3, 2, 77) == base;
    for (unsigned bit = 0; bit < 8; bit++) {
        same += stress_checksum(1000, 28, (uint8_t)(3 ^ (1u << bit)), 2, 77) == base;
        same += stress_checksum(1000, 28, 3, (uint8_t)(2 ^ (1u << bit)), 77) == base;
    }
    CHECK_EQ(same, 0);
    /* Swapping tsc and a0 (a torn mix-up of two words) changes it too. */
    CHECK(stress_checksum(77, 28, 3, 2, 1000) != base);
    return check_summary("test_stresssum");
}
