/* ioapic.h — routing a legacy ISA interrupt to a CPU through the I/O APIC.
 *
 * Only what the console needs: one ISA IRQ (COM1's IRQ 4, say) delivered
 * as a fixed interrupt to one CPU. The MADT's interrupt source overrides
 * say which global system interrupt the IRQ really is and its polarity
 * and trigger mode (ISA default: active high, edge). The 8259s stay
 * masked (pic.c). */
#ifndef DEV_IOAPIC_H
#define DEV_IOAPIC_H
#include <stdbool.h>
#include <stdint.h>
#include "firmware/madt.h"

/* Route ISA `irq` to `vector` on the CPU with (xAPIC) ID `apic_id`.
 * False, with nothing changed, when no I/O APIC serves that interrupt or
 * the ID does not fit a physical xAPIC destination. */
bool ioapic_route_isa(const struct madt_info *m, uint8_t irq, uint8_t vector, uint32_t apic_id);

#endif
