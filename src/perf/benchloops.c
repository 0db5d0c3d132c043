/* benchloops.c — see benchloops.h. One noinline function per design, so
 * each loop is compiled on its own, as a real call site would be. */
#include "perf/benchloops.h"
#include "trace/trace.h"

const struct bench_variant_info bench_variants[BV_COUNT] = {
    [BV_EMPTY] = { "empty", "empty loop" },
    [BV_RDTSC] = { "rdtsc", "bare RDTSC (the floor)" },
    [BV_TRACE_ON] = { "trace_on", "our trace point, enabled" },
    [BV_TRACE_OFF] = { "trace_off", "our trace point, disabled" },
    [BV_SPIN] = { "spinlock", "(a) per-CPU ring, try-lock, drop on contention" },
    [BV_GLOBAL] = { "global", "(b) one global ring, atomic index" },
    [BV_WIDE] = { "wide64", "(c) 64-byte entries, invalidate/validate barriers" },
    [BV_STRAT9] = { "strat9", "(a') per-CPU ring, try-lock, global atomic seq" },
};

#define LOOP(body)                     \
    uint64_t t0 = trace_rdtsc();       \
    for (uint64_t i = 0; i < n; i++) { \
        body;                          \
    }                                  \
    return trace_rdtsc() - t0

static __attribute__((noinline)) uint64_t loop_empty(uint64_t n)
{
    LOOP(__asm__ volatile(""));
}

static __attribute__((noinline)) uint64_t loop_rdtsc(uint64_t n)
{
    LOOP((void)trace_rdtsc());
}

static __attribute__((noinline)) uint64_t loop_trace(uint64_t n)
{
    LOOP(trace(BENCH, i, 0));
}

static __attribute__((noinline)) uint64_t loop_spin(struct bl_spin_ring *r, uint64_t n)
{
    LOOP(bl_spin_write(r, TRACE_EV_BENCH, i, 0));
}

static __attribute__((noinline)) uint64_t loop_strat9(struct bl_spin_ring *r, uint64_t n)
{
    LOOP(bl_strat9_write(r, TRACE_EV_BENCH, i, 0));
}

static __attribute__((noinline)) uint64_t loop_global(struct bl_global_ring *g, uint8_t cpu,
                                                      uint64_t n)
{
    LOOP(bl_global_write(g, cpu, TRACE_EV_BENCH, i, 0));
}

static __attribute__((noinline)) uint64_t loop_wide(struct bl_wide_ring *r, uint64_t n)
{
    LOOP(bl_wide_write(r, TRACE_EV_BENCH, i, 0));
}

uint64_t bench_loop(enum bench_variant v, struct bench_cpu *c, struct bl_global_ring *global,
                    uint64_t n)
{
    switch (v) {
    case BV_EMPTY:     return loop_empty(n);
    case BV_RDTSC:     return loop_rdtsc(n);
    case BV_TRACE_ON:
    case BV_TRACE_OFF: return loop_trace(n);
    case BV_SPIN:      return loop_spin(&c->spin, n);
    case BV_GLOBAL:    return loop_global(global, (uint8_t)c->spin.cpu, n);
    case BV_WIDE:      return loop_wide(&c->wide, n);
    case BV_STRAT9:    return loop_strat9(&c->strat9, n);
    default:           return 0;
    }
}

uint32_t bench_mask(enum bench_variant v, uint32_t saved)
{
    /* The other categories stay as the user had them. */
    uint32_t work = 1u << TRACE_CAT_WORK, others = saved & TRACE_CAT_BITS & ~work;
    if (v == BV_TRACE_ON)
        return TRACE_ENABLE | others | work;
    if (v == BV_TRACE_OFF)
        return TRACE_ENABLE | others;
    return saved;
}
