/* mb2.h — reading the multiboot2 boot information GRUB hands us.
 *
 * mb2_parse() walks the tags (8-byte aligned, unknown ones skipped) and
 * copies out what the kernel needs, so the original structure may be
 * overwritten afterwards. Pure code: also built and tested on the host. */
#ifndef FIRMWARE_MB2_H
#define FIRMWARE_MB2_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MB2_BOOTLOADER_MAGIC 0x36d76289u
#define MB2_MAX_MMAP         128
#define MB2_CMDLINE_MAX      512
#define MB2_RSDP_MAX         36        /* ACPI 2.0 RSDP size */
#define MB2_SMBIOS_MAX       32        /* an SMBIOS entry point: 31 (2.x) or 24 (3.x) bytes */
#define MB2_MODSTR_MAX       64

/* Multiboot2 memory map types (spec 3.6.8): 2 and the rest are reserved. */
enum mb2_mem_type { MB2_MEM_AVAILABLE = 1,
                    MB2_MEM_ACPI_RECLAIMABLE = 3,
                    MB2_MEM_NVS = 4,
                    MB2_MEM_BAD = 5 };

struct mb2_mmap_entry {
    uint64_t base, len;
    uint32_t type;
};

/* The framebuffer tag (8), as GRUB describes the display it leaves set
 * up. type: MB2_FB_RGB (direct colour: a pixel is bpp bits holding red,
 * green and blue fields at the given bit positions and widths),
 * MB2_FB_EGA_TEXT (width x height character cells, 2 bytes each) or
 * MB2_FB_INDEXED (a palette; not drawn on). pitch is bytes per line. */
enum mb2_fb_type { MB2_FB_INDEXED = 0,
                   MB2_FB_RGB = 1,
                   MB2_FB_EGA_TEXT = 2 };

struct mb2_framebuffer {
    bool present;
    uint8_t type;                     /* enum mb2_fb_type */
    uint8_t bpp;
    uint64_t addr;                     /* physical, may lie above 4 GiB */
    uint32_t pitch, width, height;
    uint8_t red_pos, red_size, green_pos, green_size, blue_pos, blue_size;
};

struct mb2_info {
    char cmdline[MB2_CMDLINE_MAX];
    bool cmdline_truncated;
    char loader[64];
    struct mb2_mmap_entry mmap[MB2_MAX_MMAP];
    unsigned mmap_count;
    bool mmap_truncated;
    uint8_t rsdp[MB2_RSDP_MAX];       /* copy of the RSDP from tag 15 or 14 */
    unsigned rsdp_len;
    bool rsdp_is_v2;
    struct mb2_framebuffer fb;         /* tag 8, when present */
    bool efi;                      /* EFI system table / image handle tags seen */
    uint64_t efi_system_table;         /* tag 12 (or 11): physical address, 0 if none */
    uint8_t smbios[MB2_SMBIOS_MAX];   /* tag 13's copy of the entry point, when given */
    unsigned smbios_len;
    bool network;                  /* tag 16: the loader got a DHCP answer (netboot) */
    char module_string[MB2_MODSTR_MAX];  /* the first module's string (tag 3), cut */
    uint32_t total_size;
};

/* Parse the boot information at `info` (total size first). Returns false
 * with `*why` set when the structure is unusable. */
bool mb2_parse(const void *info, size_t max_size, struct mb2_info *out, const char **why);

#endif
