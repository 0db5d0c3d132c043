/* tsc.h — the time-stamp counter every event is stamped with.
 *
 * Frequency, best source first: CPUID leaf 0x15 (crystal ratio; crystal
 * from ECX or leaf 0x16), the hypervisor timing leaf 0x40000010, then
 * calibration against a reference clock (HPET, ACPI PM timer, PIT): the
 * median of several 10 ms windows, each timed by bracketed TSC/reference
 * read pairs at both ends, so late wake-ups and slow reads cancel out.
 * The next working source checks the chosen one; a disagreement over
 * 0.5 % is printed (`tsc: ... says ... but ... measures ...`). Only when
 * every source fails (within a few tens of ms) is 2 GHz assumed:
 * tsc_source() "none". */
#ifndef TIME_TSC_H
#define TIME_TSC_H
#include <stdbool.h>
#include <stdint.h>

void tsc_init(void);
uint64_t tsc_hz(void);
const char *tsc_source(void);        /* cpuid15|hypervisor|hpet|pmtimer|pit|none */
bool tsc_invariant(void);     /* CPUID 0x80000007 EDX[8] */
/* Busy-wait helpers (after tsc_init). */
uint64_t tsc_from_us(uint64_t us);
uint64_t tsc_to_us(uint64_t ticks);
void tsc_delay_us(uint64_t us);

#endif
