/* benchloops.h — the timed loops of the trace-cost benchmark, one per
 * design, from one source for the kernel (perf/bench.c) and the host
 * (bench/hostbench.c, -DHOST_BUILD): the same machine code measured on
 * emulated and on real CPUs.
 *
 * Each loop records n events of one design on the calling CPU (thread)
 * and returns the TSC ticks it took; a driver runs it on one CPU and on
 * all CPUs at once and divides by n. The trace-point variants use the
 * real trace() and the calling CPU's real ring: the driver must set
 * trace_mask to bench_mask(variant, ...) around them (BENCH's category,
 * WORK, on or off) and give every CPU a ring. */
#ifndef PERF_BENCHLOOPS_H
#define PERF_BENCHLOOPS_H
#include <stdint.h>
#include "perf/baselines.h"

enum bench_variant {
    BV_EMPTY,          /* the loop alone */
    BV_RDTSC,          /* one RDTSC: the floor of any timestamped event */
    BV_TRACE_ON,       /* trace(BENCH, i, 0), category on */
    BV_TRACE_OFF,      /* the same trace point, category off */
    BV_SPIN,           /* baseline (a) */
    BV_GLOBAL,         /* baseline (b) */
    BV_WIDE,           /* baseline (c) */
    BV_STRAT9,         /* baseline (a'): (a) + a global atomic seq */
    BV_COUNT
};

struct bench_variant_info {
    const char *name;  /* stable key: bench.json, BENCH lines */
    const char *what;
};
extern const struct bench_variant_info bench_variants[BV_COUNT];

/* One CPU's (thread's) baseline rings. */
struct bench_cpu {
    struct bl_spin_ring spin;
    struct bl_spin_ring strat9;    /* same ring type, its own ring */
    struct bl_wide_ring wide;
};

/* Runs n events of `v`; returns the TSC ticks elapsed. `global` is the
 * ring all CPUs share for BV_GLOBAL. */
uint64_t bench_loop(enum bench_variant v, struct bench_cpu *c, struct bl_global_ring *global,
                    uint64_t n);

/* The trace_mask to run variant v under, given the mask to restore. */
uint32_t bench_mask(enum bench_variant v, uint32_t saved);

#endif
