/* timer.h — the periodic LAPIC timer tick on every CPU.
 *
 * Each tick is traced as an IRQ_TIMER_BEGIN/IRQ_TIMER_END pair: a0 is the
 * CPU's tick number, BEGIN's a1 how late the tick came against its ideal
 * time (TSC ticks). The handler's own duration feeds the statistics. */
#ifndef TIME_TIMER_H
#define TIME_TIMER_H
#include <stdint.h>

/* Calibrate the LAPIC timer against the TSC (BSP, once). */
void timer_init(uint32_t hz);
/* Start ticking on the calling CPU. */
void timer_start_cpu(void);
uint32_t timer_hz(void);

#endif
