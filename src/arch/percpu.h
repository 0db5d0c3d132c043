/* percpu.h — each CPU's own data, reached through IA32_GS_BASE.
 *
 * Every CPU (BSP and APs) points GS_BASE at its struct percpu before it
 * runs any other C code; gs:0 holds a pointer to the struct itself so
 * this_cpu() is one load. Fields the trace fast path reads sit at fixed
 * offsets (asserted below) so they can be read gs-relative. Each struct
 * is cache-line aligned and padded: no two CPUs share a line. */
#ifndef ARCH_PERCPU_H
#define ARCH_PERCPU_H
#include <stddef.h>
#include <stdint.h>

struct ring;

struct percpu {
    struct percpu *self;      /* gs:0  */
    struct ring *ring;      /* gs:8  this CPU's trace ring */
    uint32_t index;     /* dense CPU number, 0 = BSP */
    uint32_t apic_id;   /* local APIC ID (x2APIC ID in x2APIC mode) */
    uint64_t ticks;     /* LAPIC timer interrupts taken */
    uint64_t next_tick_tsc; /* ideal time of the next timer tick */
    uint8_t online;
} __attribute__((aligned(64)));

_Static_assert(offsetof(struct percpu, self) == 0, "gs:0 self pointer");
_Static_assert(offsetof(struct percpu, ring) == 8, "gs:8 ring pointer");

static inline struct percpu *this_cpu(void)
{
    struct percpu *p;
    __asm__ volatile("mov %%gs:0, %0" : "=r"(p));
    return p;
}

static inline struct ring *this_cpu_ring(void)
{
    struct ring *r;
    __asm__ volatile("mov %%gs:8, %0" : "=r"(r));
    return r;
}

/* Whether this CPU has pointed GS_BASE at its struct percpu yet. */
static inline int gs_ready(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(0xC0000101u));
    return lo | hi;
}

/* This CPU's dense number; 0 before GS_BASE is set (only the boot CPU
 * runs C code then), so early and fault paths may ask at any time. */
static inline uint32_t this_cpu_index(void)
{
    return gs_ready() ? this_cpu()->index : 0;
}

/* Point this CPU's GS_BASE at its entry of cpus[] (first thing on each CPU). */
void percpu_install(uint32_t index);

/* The CPU table, indexed by dense CPU number (never by APIC ID). */
extern struct percpu cpus[MAX_CPUS];
extern uint32_t cpus_online;   /* how many entries of cpus[] run */

#endif
