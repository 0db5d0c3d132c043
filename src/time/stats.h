/* stats.h — always-on statistics, kept whether tracing is on or off: the
 * timer handler's cost and lateness (timer.c adds each tick; the `s`
 * summary, perf/summary.c, reads them; the `c` clear empties them).
 *
 * Each CPU updates only its own record (no shared cache line, no lock);
 * readers (the `s` hotkey) tolerate a slightly stale view. */
#ifndef TIME_STATS_H
#define TIME_STATS_H
#include <stdint.h>

struct minmax {
    uint64_t n, min, max, sum;
};

struct cpu_stats {
    struct minmax tick_handler;      /* TSC ticks spent in the timer handler */
    struct minmax tick_lateness;     /* TSC ticks a tick came late */
} __attribute__((aligned(64)));

void stats_tick(uint32_t cpu, uint64_t handler_tsc, uint64_t late_tsc);
void minmax_add(struct minmax *m, uint64_t v);
const struct cpu_stats *stats_cpu(uint32_t cpu);
void stats_clear(void);

#endif
