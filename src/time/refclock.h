/* refclock.h — clocks of known frequency that the TSC is calibrated
 * against: HPET, ACPI PM timer (24- or 32-bit), PIT channel 2 (best
 * first). Each is checked to be present and actually counting before it
 * is trusted, and every wait on one is bounded (milliseconds): a missing
 * or dead clock costs a few milliseconds, never seconds. */
#ifndef TIME_REFCLOCK_H
#define TIME_REFCLOCK_H
#include <stdbool.h>
#include <stdint.h>

enum refclock_kind { REFCLOCK_HPET,
                     REFCLOCK_PMTIMER,
                     REFCLOCK_PIT,
                     REFCLOCK_COUNT };

/* Present (ACPI tables: needs acpi_init() first) and seen counting. */
bool refclock_probe(enum refclock_kind k);
const char *refclock_name(enum refclock_kind k);   /* hpet|pmtimer|pit */
/* TSC ticks per second over one window of at least `us` microseconds of
 * the (probed) clock; 0 when it stopped counting or the window overran
 * its bound. */
uint64_t refclock_tsc_rate(enum refclock_kind k, uint32_t us);

#endif
