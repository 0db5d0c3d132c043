/* smbiosfind.h — where this machine's SMBIOS entry point lies, and its
 * identity read from the structures there (smbios.h parses them).
 *
 * Places tried, first found wins: the multiboot2 SMBIOS tag (13); under
 * UEFI the system table's configuration tables (SMBIOS 3 GUID, then
 * SMBIOS 2); under BIOS the 0xF0000-0xFFFFF segment on 16-byte
 * boundaries ("_SM3_", else "_SM_"). Only tables below 4 GiB are read
 * (the boot page tables' identity map). */
#ifndef FIRMWARE_SMBIOSFIND_H
#define FIRMWARE_SMBIOSFIND_H
#include <stdbool.h>
#include "firmware/mb2.h"
#include "firmware/smbios.h"

struct smbios_found {
    bool present;        /* the structures were read */
    const char *where;          /* "boot-tag", "efi", "bios-area" */
    const char *why_not;        /* when !present: why, one phrase */
    struct smbios_entry entry;
    struct smbios_ident id;
};

void smbios_find(const struct mb2_info *mb, struct smbios_found *out);

#endif
