/* spinlock.h — test-and-test-and-set lock for the few shared, slow-path
 * structures (TSC sync, PCI config, MMIO maps). Never used on the trace path. */
#ifndef ARCH_SPINLOCK_H
#define ARCH_SPINLOCK_H
#include <stdbool.h>
#include "arch/cpu.h"

struct spinlock {
    volatile int locked;
};

static inline bool spin_trylock(struct spinlock *l)
{
    return !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
}

static inline void spin_lock(struct spinlock *l)
{
    while (!spin_trylock(l))
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
            cpu_relax();
}

static inline void spin_unlock(struct spinlock *l)
{
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
