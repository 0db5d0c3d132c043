/* extable.c — the exception fixup table (extable.h). */
#include "arch/extable.h"

/* The linker's bounds of the table (boot/linker.ld; on the host, GNU ld
 * makes them for any section named like a C identifier). */
extern const struct extable_entry __start_bt_extable[], __stop_bt_extable[];

static uint64_t taken;

static uint64_t at(const int32_t *field) { return (uint64_t)(uintptr_t)field + (uint64_t)(int64_t)*field; }

uint64_t extable_search(const struct extable_entry *first, const struct extable_entry *end,
                        uint64_t rip)
{
    for (const struct extable_entry *e = first; e < end; e++)
        if (at(&e->insn) == rip)
            return at(&e->fixup);
    return 0;
}

uint64_t extable_fixup(uint64_t rip)
{
    uint64_t to = extable_search(__start_bt_extable, __stop_bt_extable, rip);
    if (to)
        __atomic_fetch_add(&taken, 1, __ATOMIC_RELAXED);
    return to;
}

uint64_t extable_fixups_taken(void) { return __atomic_load_n(&taken, __ATOMIC_RELAXED); }
