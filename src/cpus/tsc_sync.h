/* tsc_sync.h — boot-time cross-CPU TSC warp check (after Linux's
 * tsc_sync.c). All online CPUs take turns, under one lock, reading the TSC
 * and comparing it with the last value any CPU read; a reading lower than
 * the last one is a warp. The worst warp bounds how far a merged timeline
 * can mis-order events of different CPUs. */
#ifndef CPUS_TSC_SYNC_H
#define CPUS_TSC_SYNC_H
#include <stdint.h>

/* Run on every online CPU at once; `ncpus` CPUs must call it. */
void tsc_sync_run(uint32_t ncpus, uint64_t duration_tsc);
uint64_t tsc_sync_worst_warp(void);
uint32_t tsc_sync_warp_cpu(void);    /* the CPU that saw the worst warp */

#endif
