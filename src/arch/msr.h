/* msr.h — MSR accesses that survive a #GP (Linux's rdmsr_safe and
 * wrmsr_safe). Use them for every MSR that a CPU or hypervisor may not
 * implement (model-specific ones, IA32_BIOS_SIGN_ID, the SMI count, ...):
 * where the access faults, the #GP handler resumes at the fixup through
 * the exception fixup table (extable.h), the call returns false and the
 * caller says what it skipped. Architectural MSRs the kernel cannot run
 * without (APIC base, GS base, the x2APIC registers) stay rdmsr/wrmsr
 * (cpu.h): a fault there is a real fault. */
#ifndef ARCH_MSR_H
#define ARCH_MSR_H
#include <stdbool.h>
#include <stdint.h>
#include "arch/extable.h"

/* *v = MSR msr; false (and *v = 0) when reading it faulted. */
static inline bool rdmsr_safe(uint32_t msr, uint64_t *v)
{
    uint32_t lo, hi, ok = 1;
    __asm__ volatile("1: rdmsr\n"
                     "2:\n"
                     ".pushsection .text.fixup, \"ax\"\n"
                     "3: xorl %[ok], %[ok]\n"
                     "   xorl %%eax, %%eax\n"
                     "   xorl %%edx, %%edx\n"
                     "   jmp 2b\n"
                     ".popsection\n" EXTABLE_ENTRY("1b", "3b")
                     : "=a"(lo), "=d"(hi), [ok] "+r"(ok) : "c"(msr) : "memory");
    *v = ((uint64_t)hi << 32) | lo;
    return ok;
}

/* MSR msr = v; false when writing it faulted. */
static inline bool wrmsr_safe(uint32_t msr, uint64_t v)
{
    uint32_t ok = 1;
    __asm__ volatile("1: wrmsr\n"
                     "2:\n"
                     ".pushsection .text.fixup, \"ax\"\n"
                     "3: xorl %[ok], %[ok]\n"
                     "   jmp 2b\n"
                     ".popsection\n" EXTABLE_ENTRY("1b", "3b")
                     : [ok] "+r"(ok)
                     : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
    return ok;
}

#endif
