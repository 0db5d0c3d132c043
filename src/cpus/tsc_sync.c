/* tsc_sync.c — find the worst backwards step of the TSC between CPUs. */
#include "cpus/tsc_sync.h"
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "arch/spinlock.h"
#include "lib/kprintf.h"
#include "time/tsc.h"

#define WAIT_DURATIONS 100      /* the boot CPU's waits: at most this many check durations */

static struct spinlock worst_lock;    /* taken only when a warp is seen */
static uint64_t last_tsc;             /* the newest TSC any CPU published */
static uint64_t worst;
static uint32_t worst_cpu;
static volatile uint32_t arrived, finished, start_flag, done_flag;

/* Spin until `*v` reaches `n`, or give up after `limit` TSC ticks (0: no
 * limit; only the boot CPU, whose own waits are bounded, gives the word). */
static void wait_count(volatile uint32_t *v, uint32_t n, uint64_t limit)
{
    uint64_t t0 = rdtsc();
    while (__atomic_load_n(v, __ATOMIC_ACQUIRE) < n && (!limit || rdtsc() - t0 < limit))
        cpu_relax();
}

static void note_warp(uint64_t by)
{
    spin_lock(&worst_lock);
    if (by > worst) {
        worst = by;
        worst_cpu = this_cpu()->index;
    }
    spin_unlock(&worst_lock);
}

/* Until `end`: read the newest published TSC, then ours (LFENCE: not
 * before that read), compare, publish ours if newer. A failed publish
 * means another CPU published a newer one meanwhile: nothing to redo. */
static void measure(uint64_t end)
{
    for (;;) {
        uint64_t seen = __atomic_load_n(&last_tsc, __ATOMIC_ACQUIRE);
        __asm__ volatile("lfence" ::: "memory");
        uint64_t now = rdtsc();
        if (now < seen)
            note_warp(seen - now);
        else
            __atomic_compare_exchange_n(&last_tsc, &seen, now, false, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED);
        if (now > end)
            return;
        cpu_relax();
    }
}

static bool skip_under_tcg(uint32_t ncpus, bool boot)
{
    if (ncpus <= TCG_MANY_VCPUS || !cpu_under_tcg())
        return false;
    if (boot)
        kprintf("tsc: warp check skipped: %u vCPUs under QEMU TCG read one host clock (more "
                "than %u would queue on the emulator's lock to wait); tsc_warp=0\n",
                ncpus,
                TCG_MANY_VCPUS);
    return true;
}

void tsc_sync_run(uint32_t ncpus, uint64_t duration)
{
    bool boot = this_cpu()->index == 0;
    uint64_t limit = duration * WAIT_DURATIONS;
    if (skip_under_tcg(ncpus, boot))
        return;
    __atomic_add_fetch(&arrived, 1, __ATOMIC_ACQ_REL);
    if (boot) {                         /* start together, so the CPUs really interleave */
        wait_count(&arrived, ncpus, limit);
        __atomic_store_n(&start_flag, 1, __ATOMIC_RELEASE);
    }
    wait_count(&start_flag, 1, 0);
    measure(rdtsc() + duration);
    __atomic_add_fetch(&finished, 1, __ATOMIC_ACQ_REL);
    if (boot) {
        wait_count(&finished, ncpus, limit);
        uint32_t done = __atomic_load_n(&finished, __ATOMIC_ACQUIRE);
        __atomic_store_n(&done_flag, 1, __ATOMIC_RELEASE);
        if (done < ncpus)
            kprintf("tsc: %u of %u CPUs did not finish the warp check within %lu ms; tsc_warp "
                    "leaves them out\n",
                    ncpus - done, ncpus, tsc_to_us(limit) / 1000);
    }
    wait_count(&done_flag, 1, 0);
}

uint64_t tsc_sync_worst_warp(void) { return worst; }
uint32_t tsc_sync_warp_cpu(void) { return worst_cpu; }
