/* timer.h — the periodic LAPIC timer tick on every CPU.
 *
 * Each tick is traced as an IRQ_TIMER_BEGIN/IRQ_TIMER_END pair: a0 is the
 * CPU's tick number, BEGIN's a1 how late the tick came against its ideal
 * time (TSC ticks). The handler's own duration feeds the statistics. */
#ifndef TIME_TIMER_H
#define TIME_TIMER_H
#include <stdbool.h>
#include <stdint.h>

/* Calibrate the LAPIC timer against the TSC (BSP, once). */
void timer_init(uint32_t hz);
/* Under QEMU's TCG with more than TCG_MANY_VCPUS (arch/cpu.h), lower a
 * default rate (not one timer_hz= gave) so that ncpus CPUs tick at most
 * TIMER_TCG_TICKS_PER_S times a second in all, and say so; on hardware and
 * other hypervisors nothing changes. Before any CPU starts ticking. */
#define TIMER_TCG_TICKS_PER_S 2048u
void timer_fit(uint32_t ncpus, bool rate_given);
/* Start ticking on the calling CPU. */
void timer_start_cpu(void);
uint32_t timer_hz(void);

#endif
