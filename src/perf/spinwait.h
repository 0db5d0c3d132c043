/* spinwait.h — bounded spin-waits on a word another CPU writes, and the
 * ordered TSC read the cross-CPU measurements take after such a wait. */
#ifndef PERF_SPINWAIT_H
#define PERF_SPINWAIT_H
#include <stdbool.h>
#include <stdint.h>
#include "arch/cpu.h"

#define SPIN_CHECK_EVERY 256        /* loads between two looks at the clock */

/* Spin until *p == want (true) or timeout_tsc TSC ticks passed (false). */
static inline bool spin_until_eq(const uint64_t *p, uint64_t want, uint64_t timeout_tsc)
{
    uint64_t t0 = rdtsc();
    for (unsigned i = 1;; i++) {
        if (__atomic_load_n(p, __ATOMIC_ACQUIRE) == want)
            return true;
        if (i % SPIN_CHECK_EVERY == 0 && rdtsc() - t0 >= timeout_tsc)
            return false;
        cpu_relax();
    }
}

/* RDTSC that cannot run ahead of the loads before it (LFENCE waits for
 * them): the time at which a value another CPU published was seen. */
static inline uint64_t rdtsc_after_loads(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

#endif
