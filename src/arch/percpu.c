/* percpu.c — the CPU table and GS_BASE installation. */
#include "arch/percpu.h"
#include "arch/cpu.h"

struct percpu cpus[MAX_CPUS];
uint32_t cpus_online;

void percpu_install(uint32_t index)
{
    struct percpu *c = &cpus[index];
    c->self = c;
    c->index = index;
    wrmsr(MSR_GS_BASE, (uint64_t)(uintptr_t)c);
}

__attribute__((noreturn)) void cpu_park(void)
{
    for (;;) {
        irq_disable();
        cpu_halt();
    }
}
