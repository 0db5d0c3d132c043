/* pat.c — program the Page Attribute Table for write combining (pat.h). */
#include "arch/pat.h"

#define CPUID_EDX_PAT (1u << 16)

uint64_t pat_with_wc(uint64_t pat)
{
    unsigned shift = 8 * PAT_ENTRY_WC;
    return (pat & ~(PAT_TYPE_MASK << shift)) | ((uint64_t)PAT_TYPE_WC << shift);
}

uint64_t pat_pde_bits(unsigned index)
{
    return (index & 1 ? PAT_PTE_PWT : 0) | (index & 2 ? PAT_PTE_PCD : 0) |
           (index & 4 ? PAT_PDE_PAT : 0);
}

#ifndef HOST_BUILD
#include "arch/cpu.h"

static bool wc;

bool pat_init(void)
{
    if (!(cpuid(1, 0).edx & CPUID_EDX_PAT))
        return false;
    /* No page uses entry 1 yet, so nothing cached under its old type (WT)
     * can be stale: write the MSR, then drop this CPU's TLB so no
     * translation made before carries the old entry (SDM §12.12.4). */
    uint64_t flags = irq_save();
    wrmsr(PAT_MSR, pat_with_wc(rdmsr(PAT_MSR)));
    uint64_t cr3;
    __asm__ volatile("mov %%cr3, %0; mov %0, %%cr3" : "=r"(cr3) : : "memory");
    irq_restore(flags);
    wc = true;
    return true;
}

bool pat_wc(void) { return wc; }
#endif
