/* pat.h — the Page Attribute Table (Intel SDM vol. 3A §12.12): memory
 * types chosen by page-table bits, here write combining for the screen.
 *
 * IA32_PAT holds eight entries; a 2 MiB page picks entry
 * PAT(bit 12) * 4 + PCD(bit 4) * 2 + PWT(bit 3). The power-on value maps
 * entries 0-3 to WB, WT, UC-, UC (and 4-7 the same). baretrace's pages use
 * entry 0 (RAM, write back) and entry 3 (PCD|PWT: registers, uncached);
 * pat_init() turns entry 1, which no page used, into write combining, so
 * PWT alone maps a framebuffer WC (mm/mmio.h, MMIO_WC). Every CPU programs
 * the same value (the SDM asks for it) before any page uses entry 1. */
#ifndef ARCH_PAT_H
#define ARCH_PAT_H
#include <stdbool.h>
#include <stdint.h>

#define PAT_MSR       0x277
#define PAT_POWER_ON  0x0007040600070406ull   /* WB WT UC- UC, twice */
#define PAT_TYPE_WC   0x01
#define PAT_TYPE_MASK 0x07ull
#define PAT_ENTRY_WC  1                        /* the entry made WC */
#define PAT_PTE_PWT   (1ull << 3)
#define PAT_PTE_PCD   (1ull << 4)
#define PAT_PDE_PAT   (1ull << 12)             /* a 2 MiB page's PAT bit */

/* IA32_PAT value `pat` with entry PAT_ENTRY_WC made write combining. Pure. */
uint64_t pat_with_wc(uint64_t pat);
/* The 2 MiB page-table bits that select PAT entry `index` (0..7). Pure. */
uint64_t pat_pde_bits(unsigned index);
/* Program this CPU's IA32_PAT (pat_with_wc of its value) when the CPU has
 * a PAT (CPUID.1:EDX bit 16); false, and nothing written, when not. */
bool pat_init(void);
/* Whether pat_init() made write combining available on the boot CPU. */
bool pat_wc(void);

#endif
