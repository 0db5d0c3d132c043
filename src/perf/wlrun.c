/* wlrun.c — the current run's number and per-CPU part (wlrun.h). */
#include "perf/wlrun.h"
#include "lib/kprintf.h"
#include "time/tsc.h"
#include "trace/trace.h"

static uint32_t runs;
static uint8_t current_id;
static struct wl_cpus run_cpus;

uint32_t wlrun_start(uint8_t id)
{
    current_id = id;
    return ++runs;
}

uint32_t workload_run_number(void) { return runs; }

void wlrun_set_cpus(const struct wl_cpus *cpus) { run_cpus = *cpus; }

const struct wl_cpus *workload_cpus(void) { return &run_cpus; }

void workload_line(const char *line) { kprintf("%s\n", line); }

bool wl_table_begin(uint32_t ncpus, const char *header, const struct cpusum_col *cols,
                    unsigned ncols)
{
    bool rows = ncpus <= CPUSUM_TABLE_MAX;
    if (rows)
        kprintf("%s\n", header);
    cpusum_begin(cols, ncols);
    return rows;
}

void wl_table_absent(bool rows, uint32_t cpu)
{
    if (rows)
        kprintf("%3u  did not take part\n", cpu);
    cpusum_absent(cpu);
}

void wl_table_end(bool rows, const char *name, uint32_t ncpus, const char *what)
{
    if (rows)
        return;
    kprintf("%s: %u CPUs, over the CPUs%s:\n", name, ncpus, what);
    cpusum_print(workload_line);
}

int64_t workload_ns(int64_t ticks)
{
    uint64_t hz = tsc_hz();
    if (!hz)
        return 0;
    uint64_t mag = ticks < 0 ? (uint64_t)-ticks : (uint64_t)ticks;
    /* Split to keep mag * 1e9 from overflowing for long intervals. */
    uint64_t ns = mag / hz * 1000000000ull + mag % hz * 1000000000ull / hz;
    return ticks < 0 ? -(int64_t)ns : (int64_t)ns;
}

/* The current workload_all job. Static, not on the boot CPU's stack: a
 * CPU left out as lost may still read it after workload_all returned. */
static struct part {
    oncpu_fn fn;
    void *arg;
} part;

static void part_entry(uint32_t cpu, void *arg)
{
    (void)arg;
    trace(WORKLOAD_BEGIN, current_id, runs);
    part.fn(cpu, part.arg);
    trace(WORKLOAD_END, current_id, runs);
}

unsigned workload_all(oncpu_fn fn, void *arg, uint64_t timeout_tsc, bool *ran)
{
    part = (struct part){ fn, arg };
    return oncpu_all(part_entry, NULL, timeout_tsc, ran);
}
