/* mmio.h — make a device's physical address range reachable.
 *
 * The boot page tables (boot/entry.asm) identity-map 0..4 GiB with 2 MiB
 * pages, the top GiB uncached. Devices on real PCs also sit above 4 GiB
 * (64-bit PCI BARs, some GOP framebuffers) or in the PCI hole below 3 GiB.
 * mmio_map() identity-maps [phys, phys + size) with 2 MiB pages, creating
 * page tables from the boot allocator as needed, and returns the address
 * to use (equal to phys: the map is an identity map).
 *
 * MMIO_UNCACHED sets PCD|PWT (registers: every access reaches the device);
 * MMIO_WC selects the PAT's write-combining entry (arch/pat.h) for a
 * framebuffer, on 2 MiB pages that hold no RAM (and uncached where the
 * CPU has no PAT);
 * MMIO_CACHED leaves the memory type to the firmware's MTRRs (write
 * combining for a framebuffer on most PCs). Mapping a range below 4 GiB
 * uncached also makes any RAM sharing its 2 MiB pages uncached: correct,
 * only slower. Returns NULL when page-table memory ran out or the range
 * lies beyond the 48-bit physical space. */
#ifndef MM_MMIO_H
#define MM_MMIO_H
#include <stdint.h>

enum mmio_type { MMIO_CACHED,
                 MMIO_UNCACHED,
                 MMIO_WC };

void *mmio_map(uint64_t phys, uint64_t size, enum mmio_type type);

#endif
