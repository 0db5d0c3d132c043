/* smbios.h — what the machine is, from its SMBIOS tables (DMTF DSP0134).
 *
 * Pure parsing, also built and tested on the host: smbios_entry_parse()
 * checks an entry point (the 32-bit "_SM_" of SMBIOS 2.x or the 64-bit
 * "_SM3_" of 3.x) and says where the structure table is;
 * smbios_table_parse() walks the structures and copies out the BIOS
 * (type 0), system (type 1) and board (type 2) strings and sums the
 * installed memory (type 17). Serial numbers, UUIDs and asset tags are
 * never read, so a log can be shared. Where the entry point lies is
 * smbiosfind.h's business. */
#ifndef FIRMWARE_SMBIOS_H
#define FIRMWARE_SMBIOS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SMBIOS_STR_MAX     64          /* each string kept, cut to fit */
#define SMBIOS_EP2_LEN     0x1F        /* "_SM_" entry point */
#define SMBIOS_EP3_LEN     0x18        /* "_SM3_" entry point */
#define SMBIOS_MAX_STRUCTS 4096        /* a walk's bound when the count is unknown */

struct smbios_entry {
    uint8_t major, minor;
    uint64_t table_addr;                /* physical */
    uint32_t table_len;                 /* 2.x: exact; 3.x: the maximum */
    uint32_t structs;                   /* 2.x: the count; 3.x: 0 (until type 127) */
};

struct smbios_ident {
    char bios_vendor[SMBIOS_STR_MAX], bios_version[SMBIOS_STR_MAX], bios_date[SMBIOS_STR_MAX];
    char sys_vendor[SMBIOS_STR_MAX], sys_product[SMBIOS_STR_MAX], sys_version[SMBIOS_STR_MAX];
    char board_vendor[SMBIOS_STR_MAX], board_product[SMBIOS_STR_MAX],
        board_version[SMBIOS_STR_MAX];
    uint64_t memory_mb;                 /* the sum of type 17 devices; 0 = none listed */
    uint32_t structs;                   /* structures walked */
    bool truncated;                 /* a structure ran past the table: the walk stopped */
};

/* Checks the entry point at p (avail bytes readable): anchor, length and
 * checksum. Returns false with *why set when it is not one. */
bool smbios_entry_parse(const uint8_t *p, size_t avail, struct smbios_entry *out,
                        const char **why);
/* Walks the structure table t[0..len) (at most max_structs structures,
 * 0 = until type 127 or the end). Strings: printable ASCII, others '?'. */
void smbios_table_parse(const uint8_t *t, size_t len, uint32_t max_structs,
                        struct smbios_ident *out);

#endif
