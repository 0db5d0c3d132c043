/* mb2.c — multiboot2 tag walk (Multiboot2 specification §3.6). */
#include "firmware/mb2.h"
#include "lib/bytes.h"
#include "lib/kstring.h"

#define TAG_END         0
#define TAG_CMDLINE     1
#define TAG_LOADER      2
#define TAG_MODULE      3
#define TAG_MMAP        6
#define TAG_FRAMEBUFFER 8
#define TAG_EFI32       11
#define TAG_EFI64       12
#define TAG_ACPI_OLD    14
#define TAG_ACPI_NEW    15
#define TAG_SMBIOS      13
#define TAG_NETWORK     16
#define TAG_EFI_MMAP    17
#define TAG_EFI32_IH    19
#define TAG_EFI64_IH    20

struct tag {
    uint32_t type, size;
};

static void copy_string(char *dst, size_t cap, const uint8_t *src, size_t n, bool *trunc)
{
    size_t i = 0;
    while (i < n && src[i] && i + 1 < cap) {
        dst[i] = (char)src[i];
        i++;
    }
    dst[i] = '\0';
    if (trunc)
        *trunc = i < n && src[i];
}

static void parse_mmap(const uint8_t *t, uint32_t size, struct mb2_info *out)
{
    uint32_t entry_size = le32(t + 8);
    if (entry_size < 24)
        return;
    for (uint32_t off = 16; off + entry_size <= size; off += entry_size) {
        if (out->mmap_count == MB2_MAX_MMAP) {
            out->mmap_truncated = true;
            return;
        }
        struct mb2_mmap_entry *e = &out->mmap[out->mmap_count++];
        e->base = le64(t + off);
        e->len = le64(t + off + 8);
        e->type = le32(t + off + 16);
    }
}

static void parse_rsdp(const uint8_t *t, uint32_t size, bool v2, struct mb2_info *out)
{
    if (out->rsdp_is_v2 && !v2)
        return;                         /* prefer the ACPI 2.0 copy */
    uint32_t n = size - 8;
    if (n > MB2_RSDP_MAX)
        n = MB2_RSDP_MAX;
    memcpy(out->rsdp, t + 8, n);
    out->rsdp_len = n;
    out->rsdp_is_v2 = v2;
}

/* Framebuffer tag layout (GRUB's struct multiboot_tag_framebuffer):
 * addr u64 @8, pitch @16, width @20, height @24, bpp u8 @28, type u8 @29,
 * reserved u16 @30, then for RGB the field positions and sizes @32..37. */
#define FB_COMMON_SIZE 32
#define FB_RGB_SIZE    38

static void parse_fb(const uint8_t *t, uint32_t size, struct mb2_info *out)
{
    struct mb2_framebuffer *fb = &out->fb;
    if (size < FB_COMMON_SIZE)
        return;
    fb->addr = le64(t + 8);
    fb->pitch = le32(t + 16);
    fb->width = le32(t + 20);
    fb->height = le32(t + 24);
    fb->bpp = t[28];
    fb->type = t[29];
    if (fb->type == MB2_FB_RGB) {
        if (size < FB_RGB_SIZE)
            return;                     /* no field layout: unusable */
        fb->red_pos = t[32];
        fb->red_size = t[33];
        fb->green_pos = t[34];
        fb->green_size = t[35];
        fb->blue_pos = t[36];
        fb->blue_size = t[37];
    }
    fb->present = true;
}

static void parse_tag(const uint8_t *t, uint32_t type, uint32_t size, struct mb2_info *out)
{
    switch (type) {
    case TAG_CMDLINE:
        copy_string(out->cmdline, sizeof out->cmdline, t + 8, size - 8, &out->cmdline_truncated);
        break;
    case TAG_LOADER:
        copy_string(out->loader, sizeof out->loader, t + 8, size - 8, NULL);
        break;
    case TAG_MMAP:
        if (size >= 16)
            parse_mmap(t, size, out);
        break;
    case TAG_FRAMEBUFFER:
        parse_fb(t, size, out);
        break;
    case TAG_ACPI_OLD:
    case TAG_ACPI_NEW:
        if (size > 8)
            parse_rsdp(t, size, type == TAG_ACPI_NEW, out);
        break;
    case TAG_MODULE:                    /* mod_start u32 @8, mod_end u32 @12, string @16 */
        if (size > 16 && !out->module_string[0])
            copy_string(out->module_string, sizeof out->module_string, t + 16, size - 16, NULL);
        break;
    case TAG_SMBIOS:                    /* major @8, minor @9, reserved[6], entry point @16 */
        if (size > 16) {
            out->smbios_len = size - 16 < MB2_SMBIOS_MAX ? size - 16 : MB2_SMBIOS_MAX;
            memcpy(out->smbios, t + 16, out->smbios_len);
        }
        break;
    case TAG_NETWORK:
        out->network = true;
        break;
    case TAG_EFI64:                     /* the system table's address, u64 @8 */
        if (size >= 16)
            out->efi_system_table = le64(t + 8);
        out->efi = true;
        break;
    case TAG_EFI32:
        if (size >= 12)
            out->efi_system_table = le32(t + 8);
        out->efi = true;
        break;
    case TAG_EFI_MMAP:
    case TAG_EFI32_IH:
    case TAG_EFI64_IH:
        out->efi = true;
        break;
    default:
        break;                          /* unknown tags are skipped */
    }
}

bool mb2_parse(const void *info, size_t max_size, struct mb2_info *out, const char **why)
{
    const uint8_t *base = info;
    memset(out, 0, sizeof *out);
    if (!info || ((uintptr_t)info & 7)) {
        *why = "boot information pointer is null or misaligned";
        return false;
    }
    uint32_t total = le32(base);
    if (total < 16 || total > max_size) {
        *why = "boot information has an implausible size";
        return false;
    }
    out->total_size = total;
    for (uint32_t off = 8; off + sizeof(struct tag) <= total;) {
        uint32_t type = le32(base + off), size = le32(base + off + 4);
        if (type == TAG_END)
            return true;
        if (size < 8 || off + size > total) {
            *why = "a boot information tag overruns the structure";
            return false;
        }
        parse_tag(base + off, type, size, out);
        off += (size + 7) & ~7u;
    }
    *why = "boot information has no end tag";
    return false;
}
