/* acpi.h — finding ACPI tables: RSDP (from GRUB's tag, else the BIOS
 * areas), then the XSDT (ACPI 2.0+) or RSDT. Every table's checksum is
 * verified before it is handed out. */
#ifndef FIRMWARE_ACPI_H
#define FIRMWARE_ACPI_H
#include <stdbool.h>
#include <stdint.h>
#include "firmware/mb2.h"

struct acpi_sdt {                     /* the common System Description Table header */
    char signature[4];
    uint32_t length;
    uint8_t revision, checksum;
    char oem_id[6], oem_table_id[8];
    uint32_t oem_revision, creator_id, creator_revision;
} __attribute__((packed));

/* Locate the root table. False (with a message printed) when there is none. */
bool acpi_init(const struct mb2_info *mb);
/* The first table with `sig` whose checksum is good, or NULL. */
const struct acpi_sdt *acpi_find(const char sig[4]);

/* FADT facts the timers need. */
uint16_t acpi_pm_timer_port(void);    /* 0 when absent */
bool acpi_pm_timer_32bit(void);
/* HPET base from its ACPI table, or 0. */
uint64_t acpi_hpet_base(void);

#endif
