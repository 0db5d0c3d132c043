/* refclock.h — clocks of known frequency used to calibrate the TSC:
 * HPET, ACPI PM timer, PIT channel 2 (best first). Each is checked to be
 * present and actually counting before it is trusted. */
#ifndef REFCLOCK_H
#define REFCLOCK_H
#include <stdbool.h>
#include <stdint.h>

enum refclock_kind { REFCLOCK_NONE, REFCLOCK_HPET, REFCLOCK_PMTIMER, REFCLOCK_PIT };

/* Choose the best working reference clock (needs acpi_init() first). */
enum refclock_kind refclock_select(void);
const char *refclock_name(enum refclock_kind k);
/* TSC ticks per second measured over at least `us` microseconds of the
 * reference clock; 0 when the clock stopped answering (bounded wait). */
uint64_t refclock_tsc_rate(enum refclock_kind k, uint32_t us);

#endif
