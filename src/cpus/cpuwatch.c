/* cpuwatch.c — silent CPUs, seen from their timer tick deadlines. */
#include "cpus/cpuwatch.h"
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "cpus/smp.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "time/tsc.h"
#include "trace/ring.h"

bool cpuwatch_silent(uint32_t cpu, uint64_t *ms)
{
    const struct percpu *c = &cpus[cpu];
    uint64_t due = __atomic_load_n(&c->next_tick_tsc, __ATOMIC_RELAXED), now = rdtsc();
    bool self = gs_ready() && this_cpu()->index == cpu;
    if (!c->online || self || !due || now <= due)
        return false;
    *ms = tsc_to_us(now - due) / 1000;
    return *ms >= CPUWATCH_SILENT_MS;
}

unsigned cpuwatch_list(char *buf, size_t cap, bool say)
{
    unsigned n = 0;
    size_t at = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < smp_slots() && i < MAX_CPUS; i++) {
        uint64_t ms;
        if (!cpuwatch_silent(i, &ms))
            continue;
        if (at + 12 < cap)
            at += (size_t)ksnprintf(buf + at, cap - at, "%s%u", n ? "," : "", i);
        if (say)
            kprintf("cpu: CPU %u does not answer (no timer interrupt for %lu ms); its ring "
                    "is read as it is\n",
                    i, ms);
        n++;
    }
    return n;
}

void cpuwatch_hang(void)
{
    irq_disable();
    struct ring *r = this_cpu_ring();
    /* Stop inside a trace point, the worst place: a slot reserved (head
     * moved, as ring_write's first step) and never written or committed. */
    if (r)
        __asm__ volatile("incq %0" : "+m"(r->head) : : "memory");
    for (;;)
        cpu_relax();
}
