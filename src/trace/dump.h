/* dump.h — the `d` hotkey: every CPU's ring over the console port in the
 * machine format of docs/dump-format.md, between a `DUMP BEGIN` and a
 * `DUMP END` line.
 *
 * Tracing is paused on every CPU (writers already inside a trace point
 * finish first; one still unfinished after a bounded wait is excluded and
 * counted, and named with any CPU that stopped answering: no step waits
 * for a CPU without a bound) just long enough to copy every ring into its shadow; then it
 * resumes and the copy is streamed. Without shadow memory tracing stays
 * paused for the whole dump, and the dump says so (snapshot=paused).
 * The console is held for the stream so no other text can land inside the
 * dump; holding it does not disable interrupts (console.h), so the boot
 * CPU's timer keeps ticking, on time, through the whole transfer. */
#ifndef TRACE_DUMP_H
#define TRACE_DUMP_H
#include <stdbool.h>
#include <stdint.h>
#include "trace/encode.h"
#include "trace/ring.h"

/* Facts from boot that every dump carries in its metadata. */
struct dump_facts {
    const char *fw;               /* "bios" | "uefi" */
    uint32_t    found, parked, failed;
    uint64_t    tsc_warp;
    int         invariant_tsc;
    const char *tsc_src;
    uint32_t    timer_hz;
};

void     dump_set_facts(const struct dump_facts *f);

/* Why a dump is written, and by whom (the %M line says trigger=...). */
struct dump_request {
    const char *trigger;          /* "key", "fault", "nmi", "timer", "workload" */
    int32_t     fault_cpu;        /* -1: none; else fault_cpu= fault_vector= */
    uint64_t    fault_vector;
    bool        quiet;            /* no DUMP_BEGIN/END event on this CPU: a
                                     faulted CPU's last event stays its EXCEPTION */
};
/* Write one dump of this boot's rings; returns the events it held (0,
 * said on the console, when another dump kept running for too long). */
uint64_t dump_run(const struct dump_request *rq);
/* dump_run for the `d` key. */
uint64_t dump_all(void);
/* Dump rings nobody writes any more (the previous boot's, prevboot.h),
 * marked boot=previous, with their own TSC rate and APIC ids. */
uint64_t dump_rings_of_previous_boot(struct ring *const rings[], unsigned n, uint64_t tsc_hz,
                                     const uint32_t *apic_ids, const struct dump_extra *extras,
                                     unsigned nextras);
/* Run `fn` with tracing paused and every ring quiescent (used by clear). */
void     dump_with_rings_paused(void (*fn)(void));

/* One reader of the rings at a time (dumps, `p`, `s`, clear), on any CPU:
 * dump_claim waits at most wait_us for the current one, and nests on the
 * CPU that holds it. A fault or NMI on that CPU while it reads must not
 * wait for itself: dump_held_here() tells, dump_abandon() undoes the
 * pause and the console lock the interrupted reader held, so nothing
 * deadlocks. */
bool     dump_claim(uint64_t wait_us);
void     dump_release(void);
bool     dump_held_here(void);
void     dump_abandon(void);
/* Tracing off, also for the reader that has it paused now (so that its
 * resume does not turn it back on): trace.on_fault=freeze. */
void     dump_stop_tracing(void);

/* A still image of every online CPU's ring for readers (dump, `p`, `s`):
 * copies when shadow memory exists (tracing runs on meanwhile), else the
 * live rings with tracing paused until dump_thaw(). rings[i] is NULL for
 * an offline CPU. */
struct frozen {
    struct ring *rings[MAX_CPUS];
    unsigned     n;
    bool         copied;
    char         silent[64];      /* CPUs that do not answer, "1,3" (cpuwatch.h) */
    char         busy[64];        /* CPUs still inside a trace point after the wait */
};
/* False (said on the console) when another reader kept the rings too long. */
bool dump_freeze(struct frozen *f);
void dump_thaw(struct frozen *f);

#endif
