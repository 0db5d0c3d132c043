/* oncpu.h — run a function on other CPUs, from their idle loops.
 *
 * The boot CPU posts a job (fn, arg) into a CPU's mailbox and wakes it
 * with the VEC_WL_WAKE IPI (traced as IPI_SEND / IPI_RECV); the CPU's idle
 * loop calls oncpu_poll(), which runs the job with interrupts on and marks
 * it done, then wakes the boot CPU (VEC_WL_DONE), which halts while it
 * waits. Only the boot CPU posts jobs, and it runs its own share itself.
 *
 * Every wait is bounded, so a CPU that never answers costs time, never a
 * hang: a CPU that does not take its job within ONCPU_CLAIM_MS is named on
 * the console, the job withdrawn (it can never start late) and the CPU
 * left out until oncpu_new_run(); a CPU that takes a job but does not
 * finish within the caller's limit is named and marked lost: it gets no
 * further job until it has finished that one. */
#ifndef PERF_ONCPU_H
#define PERF_ONCPU_H
#include <stdbool.h>
#include <stdint.h>

#define ONCPU_CLAIM_MS 3000               /* emulated CPUs on a busy host can starve for seconds */

typedef void (*oncpu_fn)(uint32_t cpu, void *arg);

void oncpu_init(void);                 /* boot CPU, once: the wake vector */
/* Idle loop of every CPU: call with interrupts off; runs a posted job with
 * interrupts on and returns with them off again. */
void oncpu_poll(void);
/* Online, started, not lost, and not absent this run. The boot CPU (0)
 * always is. */
bool oncpu_usable(uint32_t cpu);
/* A new workload run: CPUs that missed a job in an earlier one get jobs again. */
void oncpu_new_run(void);
/* CPUs with an index (online or not): indices are 0 .. oncpu_slots()-1. */
uint32_t oncpu_slots(void);

/* Post fn(cpu, arg) to AP `cpu`, wake it and wait until it has taken the
 * job (true) or ONCPU_CLAIM_MS passed (false: withdrawn, reported). */
bool oncpu_start(uint32_t cpu, oncpu_fn fn, void *arg);
/* Wait until `cpu` finished its job: true, or false after timeout_tsc
 * (reported; the CPU is lost until it finishes). */
bool oncpu_wait(uint32_t cpu, uint64_t timeout_tsc);

/* Run fn on every usable CPU at once, the boot CPU included. The APs
 * begin only when all of them have taken the job, so they start within a
 * wake-up of each other; fn can line them up exactly with oncpu_barrier.
 * Waits at most timeout_tsc after the boot CPU's own share for the others.
 * ran[i] (MAX_CPUS entries, may be NULL) says which CPUs ran fn to the end;
 * returns how many did. */
unsigned oncpu_all(oncpu_fn fn, void *arg, uint64_t timeout_tsc, bool *ran);

/* Run fa on CPU a and fb on CPU b (a != b) at once; either may be the boot
 * CPU. Both sides must bound their own waits for each other. True when
 * both ran to the end within timeout_tsc. */
bool oncpu_pair(uint32_t a, oncpu_fn fa, uint32_t b, oncpu_fn fb, void *arg,
                uint64_t timeout_tsc);

/* Inside a job of oncpu_all: wait until every CPU of the job got here, or
 * timeout_tsc passed (false: the late CPUs are left out of later barriers
 * of this job so they cannot slow it again). */
bool oncpu_barrier(uint64_t timeout_tsc);

#endif
