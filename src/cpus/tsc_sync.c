/* tsc_sync.c — find the worst backwards step of the TSC between CPUs. */
#include "cpus/tsc_sync.h"
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "arch/spinlock.h"

static struct spinlock lock;
static uint64_t last_tsc;
static uint64_t worst;
static uint32_t worst_cpu;
static volatile uint32_t arrived, start_flag, finished;

/* Spin until `*v` reaches `n`, or give up after `limit` TSC ticks (a CPU
 * that never comes must not hang the boot). */
static void wait_count(volatile uint32_t *v, uint32_t n, uint64_t limit)
{
    uint64_t t0 = rdtsc();
    while (__atomic_load_n(v, __ATOMIC_ACQUIRE) < n && rdtsc() - t0 < limit)
        cpu_relax();
}

void tsc_sync_run(uint32_t ncpus, uint64_t duration)
{
    uint64_t limit = duration * 100;
    /* Start together so the CPUs really interleave. */
    __atomic_add_fetch(&arrived, 1, __ATOMIC_ACQ_REL);
    if (this_cpu()->index == 0) {
        wait_count(&arrived, ncpus, limit);
        __atomic_store_n(&start_flag, 1, __ATOMIC_RELEASE);
    }
    wait_count(&start_flag, 1, limit);

    uint64_t end = rdtsc() + duration;
    for (;;) {
        spin_lock(&lock);
        uint64_t now = rdtsc();
        if (now < last_tsc && last_tsc - now > worst) {
            worst = last_tsc - now;
            worst_cpu = this_cpu()->index;
        }
        last_tsc = now;
        spin_unlock(&lock);
        if (now > end)
            break;
    }
    __atomic_add_fetch(&finished, 1, __ATOMIC_ACQ_REL);
    wait_count(&finished, ncpus, limit);
}

uint64_t tsc_sync_worst_warp(void) { return worst; }
uint32_t tsc_sync_warp_cpu(void) { return worst_cpu; }
