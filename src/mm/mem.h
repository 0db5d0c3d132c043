/* mem.h — boot-time physical memory allocator.
 *
 * A bump allocator over the multiboot2 memory map's AVAILABLE ranges
 * above the kernel image and below 4 GiB (the identity-mapped space).
 * Memory is never freed: everything allocated lives until reset.
 *
 * Reserved ranges (mem_reserve) are never handed out: the previous boot's
 * trace kept across a warm reset, and this boot's reset-surviving region,
 * which mem_place() puts at an address chosen from the memory map alone
 * (the lowest fitting one at or above a floor), so that the next boot can
 * find it again and neither GRUB nor this allocator writes over it. */
#ifndef MM_MEM_H
#define MM_MEM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "firmware/mb2.h"

#define MEM_MAX_RESERVED 4

void mem_init(const struct mb2_info *mb);
/* Zeroed memory aligned to `align` (a power of two), or NULL. */
void *mem_alloc(size_t size, size_t align);
/* A free 4 KiB page below 1 MiB for the AP trampoline, or 0. */
uint32_t mem_low_page(void);
uint64_t mem_available_bytes(void);

/* Keep [base, base + size) away from mem_alloc and mem_place; false when
 * the table is full. */
bool mem_reserve(uint64_t base, uint64_t size);
/* The lowest `align`-aligned address >= floor where `size` bytes lie in
 * one AVAILABLE range, overlap no reserved range and nothing mem_alloc
 * has handed out; reserved (not zeroed) before it is returned. 0 if none. */
uint64_t mem_place(uint64_t size, uint64_t align, uint64_t floor);
/* Whether [base, base + size) lies inside one AVAILABLE range of the map
 * and the identity-mapped space. */
bool mem_is_available(uint64_t base, uint64_t size);
/* Whether any byte of [base, base + size) is RAM by the memory map
 * (available, ACPI reclaimable, ACPI NVS or bad memory): never a device's
 * registers. The kernel, its rings and the kept trace all lie in RAM. */
bool mem_is_ram(uint64_t base, uint64_t size);
/* Calls fn(base, end) for each AVAILABLE range (clipped to the
 * identity-mapped space). */
void mem_each_available(void (*fn)(uint64_t base, uint64_t end, void *ctx), void *ctx);

#endif
