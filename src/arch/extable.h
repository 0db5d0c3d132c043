/* extable.h — the exception fixup table: instructions that may fault and
 * where to go on instead (Linux's __ex_table, arch/x86/mm/extable.c).
 *
 * An instruction a CPU or hypervisor may not implement (an MSR, mostly:
 * msr.h) is assembled with a table entry naming it and a fixup. When it
 * raises #GP, the exception handler finds its address in the table and
 * resumes at the fixup, which reports the failure to the caller; nothing
 * else about the fault changes. Entries are 32-bit offsets from
 * themselves, so the table needs no relocation (the kernel, and the host
 * unit test's position-independent binary alike). */
#ifndef ARCH_EXTABLE_H
#define ARCH_EXTABLE_H
#include <stdbool.h>
#include <stdint.h>

struct extable_entry {
    int32_t insn;                       /* the instruction that may fault, from &insn */
    int32_t fixup;                      /* where to resume, from &fixup */
};
_Static_assert(sizeof(struct extable_entry) == 8, "the asm below emits two .long");

/* Inside an asm statement: `insn` may fault (#GP) and then goes on at
 * `fixup` (both local labels, e.g. "1b", "3f"). */
#define EXTABLE_ENTRY(insn, fixup)     \
    ".pushsection bt_extable, \"a\"\n" \
    ".balign 4\n"                      \
    ".long " insn " - .\n"             \
    ".long " fixup " - .\n"            \
    ".popsection\n"

/* The fixup for a fault at rip in [first, end); 0 when there is none. */
uint64_t extable_search(const struct extable_entry *first, const struct extable_entry *end,
                        uint64_t rip);
/* The fixup for a fault at rip in this image's table; 0 when none. */
uint64_t extable_fixup(uint64_t rip);
/* Faults the table has turned into failed accesses, all CPUs. */
uint64_t extable_fixups_taken(void);

#endif
