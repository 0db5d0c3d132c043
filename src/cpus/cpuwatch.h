/* cpuwatch.h — which CPUs have stopped answering, and debug.hang.
 *
 * A CPU that takes no timer interrupt for CPUWATCH_SILENT_MS is silent:
 * it spins with interrupts off, is parked after a fault, or hangs. No
 * reader ever waits for such a CPU (a dump, `s`, `p` only check its ring
 * with a bounded wait); this only names it on the console and in dumps.
 * The check reads the per-CPU tick deadline (timer.c): no IPI, no wait. */
#ifndef CPUS_CPUWATCH_H
#define CPUS_CPUWATCH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CPUWATCH_SILENT_MS 1000    /* emulated CPUs may stall ~1 s under load */

/* Whether online CPU `cpu` (not the caller) is silent; *ms: for how long. */
bool cpuwatch_silent(uint32_t cpu, uint64_t *ms);
/* The silent CPUs as "1,3" in buf (empty when none); returns how many.
 * With `say`, each is also named on the console. */
unsigned cpuwatch_list(char *buf, size_t cap, bool say);
/* debug.hang=N: the calling CPU spins with interrupts off, forever, in
 * the middle of a trace point (one event reserved, never written): every
 * reader must give up on it after a bounded wait and exclude that event. */
__attribute__((noreturn)) void cpuwatch_hang(void);

#endif
