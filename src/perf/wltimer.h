/* wltimer.h — a workload's own use of this CPU's LAPIC timer.
 *
 * While a workload holds the timer the periodic tick (timer.h) is
 * stopped; wltimer_release() restarts it. The handler runs at VEC_WL_TIMER
 * and gets the TSC read first thing at handler entry. */
#ifndef PERF_WLTIMER_H
#define PERF_WLTIMER_H
#include <stdint.h>

typedef void (*wltimer_fn)(uint64_t entry_tsc);

void wltimer_init(void);           /* boot CPU, once: the vector */
/* One interrupt about after_tsc TSC ticks from now. Returns its deadline
 * in TSC ticks, derived from the LAPIC count really programmed (so the
 * LAPIC's granularity does not count as latency). */
uint64_t wltimer_oneshot(uint64_t after_tsc, wltimer_fn fn);
/* Interrupts at about `hz` per second until wltimer_release(). */
void wltimer_periodic(uint32_t hz, wltimer_fn fn);
/* Stop the workload's timer; the periodic tick resumes. */
void wltimer_release(void);
/* The LAPIC timer's rate (TSC ticks of one LAPIC count, x 1000). */
uint64_t wltimer_tsc_per_count_x1000(void);

#endif
