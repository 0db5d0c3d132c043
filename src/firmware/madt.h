/* madt.h — the ACPI Multiple APIC Description Table: which CPUs exist.
 *
 * Entry types read: 0 (processor local APIC), 9 (processor local x2APIC,
 * for IDs >= 255), 5 (local APIC address override), 1 (I/O APIC) and 2
 * (interrupt source override: where a legacy ISA IRQ really arrives). Only entries with
 * the ENABLED flag are CPUs we may start; ONLINE_CAPABLE ones are merely
 * hot-pluggable later and are counted separately. An APIC ID listed twice
 * (some firmware lists a CPU below 255 as both type 0 and type 9) is one
 * CPU, its first entry; a type 9 entry with ID 0xFFFFFFFF names no CPU
 * (it is the broadcast ID, where an INIT would reach every CPU). x2APIC
 * IDs are 32-bit and may be sparse. Pure code (host-tested). */
#ifndef FIRMWARE_MADT_H
#define FIRMWARE_MADT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CPUs kept: every one the image can run (MAX_CPUS), at least 1024, so
 * that those left parked can be named. */
#define MADT_MAX_CPUS      (MAX_CPUS > 1024 ? MAX_CPUS : 1024)
#define MADT_NO_CPU        0xFFFFFFFFu   /* the x2APIC broadcast ID: never a CPU's */
#define MADT_MAX_IOAPICS   8
#define MADT_MAX_OVERRIDES 16

struct madt_cpu {
    uint32_t apic_id;
    uint32_t uid;
    bool x2apic;
};
struct madt_ioapic {
    uint32_t id, addr, gsi_base;
};
/* ISA IRQ `irq` arrives at global system interrupt `gsi`; flags are the
 * MPS INTI flags: bits 0-1 polarity, bits 2-3 trigger mode. */
struct madt_override {
    uint8_t irq;
    uint32_t gsi;
    uint16_t flags;
};

struct madt_info {
    uint64_t lapic_addr;               /* after any type 5 override */
    bool pcat_compat;              /* legacy 8259 PICs present */
    unsigned enabled;                  /* ENABLED CPU entries */
    unsigned online_capable;           /* present but disabled, hot-pluggable */
    unsigned disabled;                 /* neither: firmware says unusable */
    unsigned repeated;                 /* ENABLED entries of an APIC ID seen before */
    unsigned invalid;                  /* ENABLED entries with ID MADT_NO_CPU */
    unsigned stored;                   /* entries in cpus[] (<= MADT_MAX_CPUS) */
    struct madt_cpu cpus[MADT_MAX_CPUS];   /* ENABLED entries, table order */
    unsigned ioapics, overrides;           /* entries stored below (extra ones dropped) */
    struct madt_ioapic ioapic[MADT_MAX_IOAPICS];
    struct madt_override override[MADT_MAX_OVERRIDES];
};

/* Parse a whole MADT (header included, `len` bytes). False with `*why` on
 * a malformed table (entries are bounds-checked against `len`). */
bool madt_parse(const uint8_t *table, size_t len, struct madt_info *out, const char **why);

#endif
