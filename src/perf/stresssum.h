/* stresssum.h — the checksum every stress event carries in a1.
 *
 * It covers every field of the 32-byte record except seq (which the ring
 * assigns inside the write, and which the checker tests for contiguity
 * instead): tsc, type, cpu, flags and a0. A record whose fields came from
 * two different writes (torn), or a slot still holding an older event
 * where a newer one was expected, fails it. scripts/btlib/workloads.py
 * computes the same function; test/unit/test_stresssum.c pins both to the
 * same known answers. Pure code (kernel and host). */
#ifndef PERF_STRESSSUM_H
#define PERF_STRESSSUM_H
#include <stdint.h>

/* The splitmix64 finaliser: every input bit affects every output bit. */
static inline uint64_t stress_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

static inline uint64_t stress_checksum(uint64_t tsc, uint16_t type, uint8_t cpu,
                                       uint8_t flags, uint64_t a0)
{
    uint64_t h = stress_mix(tsc ^ 0x9E3779B97F4A7C15ull);
    h = stress_mix(h ^ a0);
    return stress_mix(h ^ ((uint64_t)type | (uint64_t)cpu << 16 | (uint64_t)flags << 24));
}

#endif
