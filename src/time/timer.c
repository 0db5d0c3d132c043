/* timer.c — LAPIC periodic timer and its interrupt handler. */
#include "time/timer.h"
#include "arch/cpu.h"
#include "arch/idt.h"
#include "arch/lapic.h"
#include "arch/percpu.h"
#include "lib/kprintf.h"
#include "time/stats.h"
#include "time/tsc.h"
#include "trace/trace.h"

static uint32_t rate_hz;
static uint32_t count;                /* LAPIC timer ticks per interrupt */
static uint64_t period_tsc;

static void tick(struct int_frame *f)
{
    (void)f;
    uint64_t t0 = rdtsc();
    struct percpu *c = this_cpu();
    uint64_t n = ++c->ticks;
    uint64_t late = t0 > c->next_tick_tsc ? t0 - c->next_tick_tsc : 0;
    trace(IRQ_TIMER_BEGIN, n, late);
    /* The ideal time of the next tick; resynchronise after a long stall so
     * one lost tick is not reported as lateness forever. */
    c->next_tick_tsc += period_tsc;
    if (t0 > c->next_tick_tsc + period_tsc)
        c->next_tick_tsc = t0 + period_tsc;
    lapic_eoi();
    trace(IRQ_TIMER_END, n, 0);
    stats_tick(c->index, rdtsc() - t0, late);
}

static void set_rate(uint32_t hz)
{
    rate_hz = hz;
    uint64_t per = lapic_timer_hz() / hz;
    count = per > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)(per ? per : 1);
    /* The period the LAPIC will really produce, in TSC ticks: derived from
     * the programmed count, so rounding does not show up as lateness. */
    period_tsc = lapic_timer_hz() ? (uint64_t)count * tsc_hz() / lapic_timer_hz() : tsc_hz() / hz;
}

void timer_init(uint32_t hz)
{
    lapic_timer_calibrate(tsc_hz());
    set_rate(hz);
    idt_set_handler(VEC_TIMER, tick);
}

/* Every LAPIC timer of a TCG guest is a timer of QEMU's one main-loop
 * thread, run under the lock each vCPU also takes to wake from hlt, to
 * write EOI and to halt again; 1024 CPUs at 100 Hz kept that thread and
 * lock busy enough that the boot CPU's console writes waited minutes
 * (docs/real-hardware.md). A real machine's timers are its own. */
void timer_fit(uint32_t ncpus, bool rate_given)
{
    if (rate_given || ncpus <= TCG_MANY_VCPUS ||
        (uint64_t)rate_hz * ncpus <= TIMER_TCG_TICKS_PER_S || !cpu_under_tcg())
        return;
    uint32_t was = rate_hz, hz = TIMER_TCG_TICKS_PER_S / ncpus;
    set_rate(hz ? hz : 1);
    kprintf("timer: %u CPUs under QEMU TCG, whose one thread serves every LAPIC timer: %u Hz "
            "each (%u in all) instead of %u; timer_hz= sets the rate\n",
            ncpus, rate_hz,
            rate_hz * ncpus, was);
}

void timer_start_cpu(void)
{
    this_cpu()->next_tick_tsc = rdtsc() + period_tsc;
    lapic_timer_periodic(VEC_TIMER, count);
}

uint32_t timer_hz(void) { return rate_hz; }
