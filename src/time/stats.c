/* stats.c — per-CPU running statistics. */
#include "time/stats.h"
#include "arch/cpu.h"
#include "lib/kstring.h"

static struct cpu_stats per_cpu[MAX_CPUS];

void minmax_add(struct minmax *m, uint64_t v)
{
    if (!m->n || v < m->min) m->min = v;
    if (v > m->max) m->max = v;
    m->sum += v;
    m->n++;
}

void stats_tick(uint32_t cpu, uint64_t handler_tsc, uint64_t late_tsc)
{
    minmax_add(&per_cpu[cpu].tick_handler, handler_tsc);
    minmax_add(&per_cpu[cpu].tick_lateness, late_tsc);
}

const struct cpu_stats *stats_cpu(uint32_t cpu) { return &per_cpu[cpu]; }

void stats_clear(void)
{
    memset(per_cpu, 0, sizeof per_cpu);
}
