/* smbiosfind.c — the SMBIOS entry point: boot tag, UEFI configuration
 * table or the BIOS segment (DSP0134 §5.2; UEFI 2.10 §4.3 and §4.6). */
#include "firmware/smbiosfind.h"
#include "lib/bytes.h"
#include "lib/kstring.h"

#define BIOS_SEG_START    0xF0000u
#define BIOS_SEG_END      0x100000u
#define ANCHOR_STEP       16
#define FOUR_GIB          0x100000000ull
#define EFI_ST_NTABLES_AT 104         /* EFI_SYSTEM_TABLE (x64): NumberOfTableEntries */
#define EFI_ST_TABLES_AT  112         /* ... ConfigurationTable */
#define EFI_CT_ENTRY_LEN  24          /* EFI_GUID (16) + VendorTable (8) */
#define EFI_CT_MAX        256         /* a bound on a damaged count */

/* SMBIOS3_TABLE_GUID f2fd1544-9794-4a2c-992e-e5bbcf20e394 and
 * SMBIOS_TABLE_GUID eb9d2d31-2d88-11d3-9a16-0090273fc14d, as stored. */
static const uint8_t guid_smbios3[16] = { 0x44, 0x15, 0xfd, 0xf2, 0x94, 0x97, 0x2c, 0x4a,
                                          0x99, 0x2e, 0xe5, 0xbb, 0xcf, 0x20, 0xe3, 0x94 };
static const uint8_t guid_smbios2[16] = { 0x31, 0x2d, 0x9d, 0xeb, 0x88, 0x2d, 0xd3, 0x11,
                                          0x9a, 0x16, 0x00, 0x90, 0x27, 0x3f, 0xc1, 0x4d };

static const uint8_t *phys(uint64_t a, uint64_t len)
{
    return a && a < FOUR_GIB && len <= FOUR_GIB - a ? (const uint8_t *)(uintptr_t)a : NULL;
}

static uint64_t efi_table(uint64_t st_addr, const uint8_t guid[16])
{
    const uint8_t *st = phys(st_addr, EFI_ST_TABLES_AT + 8);
    if (!st)
        return 0;
    uint64_t n = le64(st + EFI_ST_NTABLES_AT);
    const uint8_t *ct = phys(le64(st + EFI_ST_TABLES_AT), EFI_CT_MAX * EFI_CT_ENTRY_LEN);
    for (uint64_t i = 0; ct && i < n && i < EFI_CT_MAX; i++)
        if (!memcmp(ct + i * EFI_CT_ENTRY_LEN, guid, 16))
            return le64(ct + i * EFI_CT_ENTRY_LEN + 16);
    return 0;
}

static const uint8_t *bios_scan(const char *anchor, size_t n)
{
    for (uint32_t a = BIOS_SEG_START; a + SMBIOS_EP2_LEN <= BIOS_SEG_END; a += ANCHOR_STEP)
        if (!memcmp((const void *)(uintptr_t)a, anchor, n))
            return (const uint8_t *)(uintptr_t)a;
    return NULL;
}

/* The entry point's address and where it came from, or NULL. */
static const uint8_t *locate(const struct mb2_info *mb, size_t *avail, const char **where)
{
    *avail = SMBIOS_MAX_STRUCTS;        /* memory, not a tag copy: no tighter bound */
    if (mb->smbios_len) {
        *avail = mb->smbios_len;
        *where = "boot-tag";
        return mb->smbios;
    }
    if (mb->efi) {
        *where = "efi";
        uint64_t a = efi_table(mb->efi_system_table, guid_smbios3);
        a = a ? a : efi_table(mb->efi_system_table, guid_smbios2);
        *avail = SMBIOS_EP2_LEN;
        return phys(a, SMBIOS_EP2_LEN);
    }
    *where = "bios-area";
    const uint8_t *p = bios_scan("_SM3_", 5);
    p = p ? p : bios_scan("_SM_", 4);
    *avail = p ? (size_t)(BIOS_SEG_END - (uintptr_t)p) : 0;
    return p;
}

void smbios_find(const struct mb2_info *mb, struct smbios_found *out)
{
    memset(out, 0, sizeof *out);
    size_t avail;
    const uint8_t *ep = locate(mb, &avail, &out->where);
    if (!ep) {
        out->why_not = mb->efi ? "no SMBIOS table in the UEFI configuration tables"
                               : "no SMBIOS entry point in the BIOS area";
        return;
    }
    if (!smbios_entry_parse(ep, avail, &out->entry, &out->why_not))
        return;
    const uint8_t *t = phys(out->entry.table_addr, out->entry.table_len);
    if (!t || !out->entry.table_len) {
        out->why_not = "SMBIOS structure table empty or above 4 GiB";
        return;
    }
    smbios_table_parse(t, out->entry.table_len, out->entry.structs, &out->id);
    out->present = true;
}
