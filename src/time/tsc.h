/* tsc.h — the time-stamp counter every event is stamped with.
 *
 * Frequency, best source first: CPUID leaf 0x15 (crystal ratio; crystal
 * from ECX or leaf 0x16), the hypervisor timing leaf 0x40000010, then
 * calibration against a reference clock (HPET, ACPI PM timer, PIT): the
 * median of several 10 ms windows, each timed by bracketed TSC/reference
 * read pairs at both ends, so late wake-ups and slow reads cancel out.
 *
 * A rate from CPUID or a hypervisor is a claim: the best working clock
 * measures it. Within 0.5 % it is confirmed; up to 2 % it stays,
 * unconfirmed; beyond, CPUID is wrong (some parts, hypervisors and
 * emulators) and the measurement wins (tsc_source() names that clock).
 * A measured rate is checked by the next working clock. tsc_check()
 * names the clock that confirmed the rate, or "none": then a `tsc:` line
 * says why (a disagreement, no clock to check with) and READY and the
 * dump say tsc_check=none, so a rate no clock confirmed is never taken
 * for a checked one. Only when every source fails (within a few tens of
 * ms) is 2 GHz assumed: tsc_source() "none". */
#ifndef TIME_TSC_H
#define TIME_TSC_H
#include <stdbool.h>
#include <stdint.h>

void tsc_init(void);
uint64_t tsc_hz(void);
const char *tsc_source(void);        /* cpuid15|hypervisor|hpet|pmtimer|pit|none */
const char *tsc_check(void);         /* hpet|pmtimer|pit: confirmed it; none: unconfirmed */
bool tsc_invariant(void);     /* CPUID 0x80000007 EDX[8] */
/* Busy-wait helpers (after tsc_init). */
uint64_t tsc_from_us(uint64_t us);
uint64_t tsc_to_us(uint64_t ticks);
void tsc_delay_us(uint64_t us);

#endif
