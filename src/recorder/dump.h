/* dump.h — the `d` hotkey: every CPU's ring in the machine format of
 * docs/dump-format.md, between a `DUMP BEGIN` and a `DUMP END` line,
 * over the network first when it has a way out (dumpnet.h), then over
 * the console port and to the stick (dumpstick.h), encoded again from
 * the same snapshot.
 *
 * The rings come from a snapshot (snapshot.h): tracing pauses just long
 * enough to copy every ring into its shadow, then resumes and the copy is
 * streamed; without shadow memory tracing stays paused for the whole
 * dump, and the dump says so (snapshot=paused, with busy_cpus= and
 * silent_cpus= when some CPU did not finish or answer).
 * The console is held for the stream so no other text can land inside the
 * dump; holding it does not disable interrupts (lib/kprintf.h), so the boot
 * CPU's timer keeps ticking, on time, through the whole transfer. */
#ifndef RECORDER_DUMP_H
#define RECORDER_DUMP_H
#include <stdbool.h>
#include <stdint.h>
#include "recorder/encode.h"
#include "trace/ring.h"

/* Facts from boot that every dump carries in its metadata. */
struct dump_facts {
    const char *fw;               /* "bios" | "uefi" */
    uint32_t found, parked, failed;
    uint64_t tsc_warp;
    int invariant_tsc;
    const char *tsc_src;
    uint32_t timer_hz;
    const char *tsc_check;        /* the clock that confirmed tsc_hz, or "none" */
};

void dump_set_facts(const struct dump_facts *f);
/* The %M items every dump carries, and a stream's part 0: the boot's
 * facts and the counters of the moment (uptime_tsc, capacity, ...). */
#define DUMP_FACT_EXTRAS 18
void dump_fact_extras(struct dump_extra x[DUMP_FACT_EXTRAS]);

/* Why a dump is written, and by whom (the %M line says trigger=...). */
struct dump_request {
    const char *trigger;          /* "key", "fault", "nmi", "timer", "workload" */
    int32_t fault_cpu;        /* -1: none; else fault_cpu= fault_vector= */
    uint64_t fault_vector;
    /* No DUMP_BEGIN/END event on this CPU: a faulted CPU's last event
     * stays its EXCEPTION. */
    bool quiet;
};
/* Write one dump of this boot's rings; returns the events it held (0,
 * said on the console, when another dump kept running for too long). */
uint64_t dump_run(const struct dump_request *rq);
/* dump_run for the `d` key. */
uint64_t dump_all(void);
/* Dumps asked for (key, fault, NMI, l, ...) that had nowhere to go: no
 * UART answered and no stick's dump area could take them (said on the
 * console and the status row when it happens; `s` shows the count). */
uint32_t dump_nowhere_count(void);
/* Dump rings nobody writes any more (the previous boot's, prevboot.h),
 * marked boot=previous, with their own TSC rate and APIC ids. */
uint64_t dump_rings_of_previous_boot(struct ring *const rings[], unsigned n, uint64_t tsc_hz,
                                     const uint32_t *apic_ids, const struct dump_extra *extras,
                                     unsigned nextras);
#endif
