/* mem.h — boot-time physical memory allocator.
 *
 * A bump allocator over the multiboot2 memory map's AVAILABLE ranges
 * above the kernel image and below 4 GiB (the identity-mapped space).
 * Memory is never freed: everything allocated lives until reset. */
#ifndef MEM_H
#define MEM_H
#include <stddef.h>
#include <stdint.h>
#include "mb2.h"

void  mem_init(const struct mb2_info *mb);
/* Zeroed memory aligned to `align` (a power of two), or NULL. */
void *mem_alloc(size_t size, size_t align);
/* A free 4 KiB page below 1 MiB for the AP trampoline, or 0. */
uint32_t mem_low_page(void);
uint64_t mem_available_bytes(void);

#endif
