/* tsc_sync.h — boot-time cross-CPU TSC warp check (after Linux's
 * tsc_sync.c). All online CPUs at once, for the same duration, read the
 * newest TSC value any CPU published, then their own TSC (ordered after
 * that read), and publish theirs when it is newer; a reading lower than the
 * one just seen is a warp. Lock-free: no CPU waits for another to leave a
 * critical section (a lock holder an emulator or hypervisor deschedules
 * stalled every other CPU). The worst warp bounds how far a merged timeline
 * can mis-order events of different CPUs.
 *
 * The boot CPU starts the check once all have arrived, and ends it once
 * all have finished, each wait bounded (a CPU that never comes must not
 * hang the boot; it is counted); the others follow its word, so no CPU
 * leaves early and starts its timer while the rest still measure. */
#ifndef CPUS_TSC_SYNC_H
#define CPUS_TSC_SYNC_H
#include <stdint.h>

/* Run on every online CPU at once; `ncpus` CPUs must call it. */
void tsc_sync_run(uint32_t ncpus, uint64_t duration_tsc);
uint64_t tsc_sync_worst_warp(void);
uint32_t tsc_sync_warp_cpu(void);    /* the CPU that saw the worst warp */
/* Under QEMU's TCG with more than TCG_MANY_VCPUS (arch/cpu.h) the check is
 * skipped, and said: every vCPU's TSC is the one host clock QEMU reads under
 * one lock (no warp can happen), while each waiting vCPU's PAUSE queues on
 * the emulator's lock: 512 vCPUs on 2 host cores did not finish in 7 min. */

#endif
