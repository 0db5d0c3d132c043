/* wlrun.h — what a running workload uses (perf/workload.h includes it):
 * the current run's number, its per-CPU part bracketed by
 * WORKLOAD_BEGIN/END, and ns from TSC ticks.
 *
 * Below the workload table (workload.c) and the workloads themselves, so
 * that the table calls the workloads and the workloads call this, not the
 * table: no circle inside perf/. */
#ifndef PERF_WLRUN_H
#define PERF_WLRUN_H
#include <stdbool.h>
#include <stdint.h>
#include "perf/cpusum.h"
#include "perf/oncpu.h"
#include "perf/wlargs.h"

/* workload.c, as a run of workload `id` starts: returns its run number. */
uint32_t wlrun_start(uint8_t id);

uint32_t workload_run_number(void);
/* The cpus= list of the run about to start / running (wlargs.h). */
void wlrun_set_cpus(const struct wl_cpus *cpus);
const struct wl_cpus *workload_cpus(void);
/* oncpu_all inside per-CPU WORKLOAD_BEGIN/END events of the current run. */
unsigned workload_all(oncpu_fn fn, void *arg, uint64_t timeout_tsc, bool *ran);
/* One line on the console (a newline added): for cpusum_print. */
void workload_line(const char *line);
/* A workload's per-CPU results: a row per CPU on up to CPUSUM_TABLE_MAX
 * CPUs, else the summary (cpusum.h). wl_table_begin prints the rows'
 * header (row form) and starts the summary; true: rows are printed. */
bool wl_table_begin(uint32_t ncpus, const char *header, const struct cpusum_col *cols,
                    unsigned ncols);
/* CPU `cpu` did not take part: its row says so, the summary names it. */
void wl_table_absent(bool rows, uint32_t cpu);
/* Without rows: "NAME: N CPUs, over the CPUs<what>:" and the summary. */
void wl_table_end(bool rows, const char *name, uint32_t ncpus, const char *what);
/* ns from TSC ticks (signed), for summaries. */
int64_t workload_ns(int64_t ticks);

#endif
