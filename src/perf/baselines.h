/* baselines.h — the trace designs this project grew from, re-implemented
 * for the trace-cost benchmark (bench.c in the kernel, bench/hostbench.c
 * on the host: pure code, also built with -DHOST_BUILD). Each records
 * what trace() records: TSC, type, cpu, two 64-bit arguments.
 *
 * (a) spin    a per-CPU ring behind a spinlock taken with try-lock: an
 *             event that finds the lock held (a nested writer on the same
 *             CPU, or a reader) is dropped and counted. The TSC is read
 *             under the lock so the ring stays in time order.
 * (a') strat9 the strat9 design itself: (a), plus a sequence number taken
 *             from one global counter with a locked fetch-and-add on every
 *             event, a cache line all CPUs fight over. (a) alone flatters
 *             that design; both are reported.
 * (b) global  one ring shared by all CPUs: a locked fetch-and-add on one
 *             shared index reserves each slot (the synchronised design).
 * (c) wide    a per-CPU ring of 64-byte entries written invalidate-then-
 *             validate: the timestamp is set to all ones, a write barrier,
 *             the payload, a write barrier, then the real timestamp with
 *             its top bit as the continuation flag (clear: the event fits
 *             one entry), as Akaros's ttrace does. The write barrier is
 *             the kernel's wmb(): SFENCE. */
#ifndef PERF_BASELINES_H
#define PERF_BASELINES_H
#include <stdint.h>
#include "trace/event.h"
#include "trace/trace.h"

struct bl_spin_ring {
    uint32_t lock;                 /* 0 free, 1 held */
    uint32_t cpu;
    uint64_t head, drops, mask;
    struct trace_event *slots;
} __attribute__((aligned(64)));

/* (a'): the one global sequence counter, on its own cache line. */
extern uint64_t bl_global_seq;

struct bl_global_ring {
    uint64_t head __attribute__((aligned(64)));   /* the one shared index */
    uint64_t mask __attribute__((aligned(64)));   /* read-only: own line */
    struct trace_event *slots;
};

#define BL_WIDE_CONT    (1ull << 63)   /* timestamp bit: continuation entry */
#define BL_WIDE_INVALID UINT64_MAX     /* timestamp of an entry being written */

struct bl_wide_entry {
    uint64_t tsc;                      /* BL_WIDE_INVALID while written */
    uint32_t seq;
    uint16_t type;
    uint8_t cpu, len;                 /* len: entries of this event */
    uint64_t data[6];
};
_Static_assert(sizeof(struct bl_wide_entry) == 64, "wide entries are 64 bytes");

struct bl_wide_ring {
    uint64_t head, mask;
    uint32_t cpu;
    struct bl_wide_entry *slots;
} __attribute__((aligned(64)));

/* `slots` holds `capacity` entries (a power of two), 64-byte aligned. */
void bl_spin_init(struct bl_spin_ring *r, struct trace_event *slots, uint64_t capacity,
                  uint32_t cpu);
void bl_global_init(struct bl_global_ring *g, struct trace_event *slots, uint64_t capacity);
void bl_wide_init(struct bl_wide_ring *r, struct bl_wide_entry *slots, uint64_t capacity,
                  uint32_t cpu);

/* Fills one 32-byte record, timestamped now (the TSC is read where the
 * design holds its slot: under the lock, after the reservation). */
static inline void bl_put(struct trace_event *e, uint64_t seq, uint16_t type, uint8_t cpu,
                          uint64_t a0, uint64_t a1)
{
    e->tsc = trace_rdtsc();
    e->seq = (uint32_t)seq;
    e->type = type;
    e->cpu = cpu;
    e->flags = 0;
    e->a0 = a0;
    e->a1 = a1;
}

static inline void bl_spin_write(struct bl_spin_ring *r, uint16_t type, uint64_t a0, uint64_t a1)
{
    if (__atomic_exchange_n(&r->lock, 1, __ATOMIC_ACQUIRE)) {     /* try-lock */
        __atomic_fetch_add(&r->drops, 1, __ATOMIC_RELAXED);
        return;
    }
    uint64_t seq = r->head++;
    bl_put(&r->slots[seq & r->mask], seq, type, (uint8_t)r->cpu, a0, a1);
    __atomic_store_n(&r->lock, 0, __ATOMIC_RELEASE);
}

static inline void bl_strat9_write(struct bl_spin_ring *r, uint16_t type, uint64_t a0,
                                   uint64_t a1)
{
    if (__atomic_exchange_n(&r->lock, 1, __ATOMIC_ACQUIRE)) {     /* try-lock */
        __atomic_fetch_add(&r->drops, 1, __ATOMIC_RELAXED);
        return;
    }
    uint64_t seq = __atomic_fetch_add(&bl_global_seq, 1, __ATOMIC_RELAXED);  /* lock xadd */
    bl_put(&r->slots[r->head++ & r->mask], seq, type, (uint8_t)r->cpu, a0, a1);
    __atomic_store_n(&r->lock, 0, __ATOMIC_RELEASE);
}

static inline void bl_global_write(struct bl_global_ring *g, uint8_t cpu, uint16_t type,
                                   uint64_t a0, uint64_t a1)
{
    uint64_t seq = __atomic_fetch_add(&g->head, 1, __ATOMIC_RELAXED);   /* lock xadd */
    bl_put(&g->slots[seq & g->mask], seq, type, cpu, a0, a1);
}

static inline void bl_wmb(void)
{
    __asm__ volatile("sfence" ::: "memory");
}

static inline void bl_wide_write(struct bl_wide_ring *r, uint16_t type, uint64_t a0, uint64_t a1)
{
    uint64_t tsc = trace_rdtsc();
    uint64_t seq = r->head++;
    struct bl_wide_entry *e = &r->slots[seq & r->mask];
    *(volatile uint64_t *)&e->tsc = BL_WIDE_INVALID;     /* invalidate */
    bl_wmb();
    e->seq = (uint32_t)seq;
    e->type = type;
    e->cpu = (uint8_t)r->cpu;
    e->len = 1;
    e->data[0] = a0;
    e->data[1] = a1;
    bl_wmb();
    *(volatile uint64_t *)&e->tsc = tsc & ~BL_WIDE_CONT;  /* validate */
}

#endif
