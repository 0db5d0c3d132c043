/* workload.h — measurement workloads: how they are named, started and run.
 *
 * A workload measures something an OS would hide (hardware latency, IPI
 * and cache-line latency, TSC offsets, timer wake-up error, the tracer's
 * own reliability and cost) on every CPU at once or on every pair of CPUs.
 * It records its results as WORK trace events (so a dump carries them and
 * scripts/report renders them) and prints a readable summary.
 *
 * Starting one: workload= on the kernel command line (after READY), or
 * its hotkey. Both only request it; the boot CPU's idle loop runs it
 * (workload_poll), so a key handler never blocks. One runs at a time.
 * Around the whole run the boot CPU records WORKLOAD_BEGIN / WORKLOAD_END
 * (a0 = workload id below, a1 = run number since boot); every CPU brackets
 * its own part of an all-CPU workload the same way. */
#ifndef PERF_WORKLOAD_H
#define PERF_WORKLOAD_H
#include <stdbool.h>
#include <stdint.h>
#include "perf/oncpu.h"
#include "perf/wlargs.h"
#include "perf/wlrun.h"            /* for the workloads */
#include "recorder/schema.h"

/* A workload's identity (id, name, hotkey, result events) is declared
 * once, in recorder/workloads.def (enum workload_id and workload_decl[] in
 * recorder/schema.h); this table and the hotkey help are generated from it.
 * Each workload's file defines its implementation, wl_<name>. */
/* A workload's implementation; its identity (id, name, key, results) is
 * workloads.def's, matched by the name wl_<name>. */
struct workload {
    const struct wl_param *params;  /* ends with key == NULL */
    /* Boot CPU, interrupts on; values[i] belongs to params[i]. Records
     * the results as events and prints the summary. */
    void (*run)(const uint64_t *values);
};

/* Boot CPU, once, after READY: installs the workloads' interrupt
 * handlers, then requests `spec` (workload= text; "" = none). A bad name
 * or parameter is reported on the console; the boot goes on. */
void workload_boot(const char *spec);
/* Whether `key` is a workload's hotkey. */
bool workload_has_key(int key);
/* Request the workload of hotkey `key` with its default parameters (or
 * say on the console why not: another one is running). */
void workload_key(int key);
/* The workload keys, one line (part of the hotkey help). */
void workload_help(void);
/* Idle loop of every CPU, interrupts off (returns with them off): runs a
 * job posted to this CPU and, on the boot CPU, a requested workload. */
void workload_poll(void);

#endif
