/* lapic.h — the local APIC, in xAPIC (MMIO) or x2APIC (MSR) mode.
 *
 * We use x2APIC only when firmware already switched it on
 * (IA32_APIC_BASE.EXTD): then the MMIO page is dead and every register is
 * an MSR. Otherwise the xAPIC page at the address IA32_APIC_BASE (or the
 * MADT override) names. Every wait on the APIC is bounded. */
#ifndef ARCH_LAPIC_H
#define ARCH_LAPIC_H
#include <stdbool.h>
#include <stdint.h>

/* ICR delivery modes and flags (SDM vol. 3 §11.6.1). */
#define ICR_FIXED        0x000
#define ICR_INIT         0x500
#define ICR_STARTUP      0x600
#define ICR_ASSERT       0x4000
#define ICR_ALL_BUT_SELF 0xC0000      /* destination shorthand: all excluding self */

/* Enable this CPU's LAPIC (software enable, spurious vector, LVTs masked).
 * `mmio_base` is the MADT's address, used in xAPIC mode. */
void lapic_init(uint64_t mmio_base);
bool lapic_x2apic(void);
uint32_t lapic_id(void);
void lapic_eoi(void);
/* Send an IPI; false when the previous one never left (delivery status
 * stuck) in xAPIC mode. */
bool lapic_send_ipi(uint32_t apic_id, uint32_t icr_low);
/* Clear and read the error status register. */
uint32_t lapic_read_esr(void);

/* LAPIC timer: periodic interrupts at `vector` every `count` timer ticks
 * with divide-by-16; lapic_timer_hz() is the calibrated tick rate. */
void lapic_timer_calibrate(uint64_t tsc_hz);
uint64_t lapic_timer_hz(void);
void lapic_timer_periodic(uint8_t vector, uint32_t count);
void lapic_timer_stop(void);

#endif
