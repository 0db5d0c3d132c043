/* madt.h — the ACPI Multiple APIC Description Table: which CPUs exist.
 *
 * Entry types read: 0 (processor local APIC), 9 (processor local x2APIC,
 * for IDs >= 255) and 5 (local APIC address override). Only entries with
 * the ENABLED flag are CPUs we may start; ONLINE_CAPABLE ones are merely
 * hot-pluggable later and are counted separately. Pure code (host-tested). */
#ifndef MADT_H
#define MADT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MADT_MAX_CPUS 1024

struct madt_cpu { uint32_t apic_id; uint32_t uid; bool x2apic; };

struct madt_info {
    uint64_t lapic_addr;               /* after any type 5 override */
    bool     pcat_compat;              /* legacy 8259 PICs present */
    unsigned enabled;                  /* ENABLED CPU entries */
    unsigned online_capable;           /* present but disabled, hot-pluggable */
    unsigned disabled;                 /* neither: firmware says unusable */
    unsigned stored;                   /* entries in cpus[] (<= MADT_MAX_CPUS) */
    struct madt_cpu cpus[MADT_MAX_CPUS];   /* ENABLED entries, table order */
};

/* Parse a whole MADT (header included, `len` bytes). False with `*why` on
 * a malformed table (entries are bounds-checked against `len`). */
bool madt_parse(const uint8_t *table, size_t len, struct madt_info *out, const char **why);

#endif
