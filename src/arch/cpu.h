/* cpu.h — thin wrappers for the x86 instructions the kernel uses. */
#ifndef ARCH_CPU_H
#define ARCH_CPU_H
#include <stdbool.h>
#include <stdint.h>

static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port)); }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" ::"a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" ::"a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port)
{
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline uint16_t inw(uint16_t port)
{
    uint16_t v;
    __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline uint32_t inl(uint16_t port)
{
    uint32_t v;
    __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

static inline uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" ::"c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

struct cpuid_regs {
    uint32_t eax, ebx, ecx, edx;
};

#define CPUID1_HYPERVISOR (1u << 31)   /* CPUID.1:ECX: running under a hypervisor */

static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t sub)
{
    struct cpuid_regs r;
    __asm__ volatile("cpuid" : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
                     : "a"(leaf), "c"(sub));
    return r;
}

/* QEMU's TCG (an emulator, not KVM) names itself in the hypervisor
 * leaf 0x40000000: "TCGTCGTCGTCG". There every LAPIC timer is served by
 * one emulator thread, every PAUSE and EOI of a vCPU takes one lock, and
 * every vCPU's TSC is one host clock (time/timer.c, cpus/tsc_sync.c). */
/* Past this many vCPUs under TCG, the kernel spares the emulator's lock:
 * fewer ticks in all (time/timer.c), no warp check (cpus/tsc_sync.c).
 * Up to it, 100 Hz and the check are what make test-long's 255 ran. */
#define TCG_MANY_VCPUS 256
static inline bool cpu_under_tcg(void)
{
    if (!(cpuid(1, 0).ecx & CPUID1_HYPERVISOR))
        return false;
    struct cpuid_regs r = cpuid(0x40000000u, 0);
    return r.ebx == 0x54474354u && r.ecx == 0x43544743u && r.edx == 0x47435447u;
}

static inline void cpu_relax(void) { __asm__ volatile("pause" ::: "memory"); }
static inline void irq_disable(void) { __asm__ volatile("cli" ::: "memory"); }
static inline void irq_enable(void) { __asm__ volatile("sti" ::: "memory"); }
static inline void cpu_halt(void) { __asm__ volatile("hlt" ::: "memory"); }
static inline void barrier(void) { __asm__ volatile("" ::: "memory"); }

static inline uint64_t irq_save(void)
{
    uint64_t flags;
    __asm__ volatile("pushfq; popq %0; cli" : "=r"(flags)::"memory");
    return flags;
}

static inline void irq_restore(uint64_t flags)
{
    if (flags & (1u << 9))          /* RFLAGS.IF */
        irq_enable();
}

static inline uint64_t read_cr2(void)
{
    uint64_t v;
    __asm__ volatile("mov %%cr2, %0" : "=r"(v));
    return v;
}
static inline uint64_t read_cr3(void)
{
    uint64_t v;
    __asm__ volatile("mov %%cr3, %0" : "=r"(v));
    return v;
}

#define MSR_APIC_BASE  0x1B
#define MSR_TSC_ADJUST 0x3B
#define MSR_GS_BASE    0xC0000101

/* Stop this CPU for good (interrupts off). */
__attribute__((noreturn)) void cpu_park(void);

#endif
