/* wltimer.c — see wltimer.h. The LAPIC API has a periodic mode only, so a
 * one-shot is a periodic timer the handler stops before anything else:
 * the first expiry is exactly the one-shot's. */
#include "perf/wltimer.h"
#include "arch/cpu.h"
#include "arch/idt.h"
#include "arch/lapic.h"
#include "arch/percpu.h"
#include "perf/vectors.h"
#include "time/timer.h"
#include "time/tsc.h"

static struct {
    wltimer_fn fn;
    uint8_t oneshot;
} __attribute__((aligned(64))) slot[MAX_CPUS];

static void on_timer(struct int_frame *f)
{
    uint64_t t = rdtsc();
    (void)f;
    uint32_t cpu = this_cpu()->index;
    if (slot[cpu].oneshot) {
        lapic_timer_stop();
        slot[cpu].oneshot = 0;
    }
    if (slot[cpu].fn)
        slot[cpu].fn(t);
    lapic_eoi();
}

void wltimer_init(void)
{
    idt_set_handler(VEC_WL_TIMER, on_timer);
}

/* With interrupts off: stop our timer and take, ignored, an expiry still
 * pending from it. A handler that runs more than one period late (an SMI,
 * a descheduled vCPU) finds the periodic timer already expired a second
 * time; that second interrupt would otherwise land on the next arming and
 * look like a wake-up long before its deadline. */
static void drain(uint32_t cpu)
{
    slot[cpu].fn = 0;
    slot[cpu].oneshot = 0;
    lapic_timer_stop();
    __asm__ volatile("sti; nop; cli" ::: "memory");   /* pending ones arrive here */
}

static uint32_t counts_for(uint64_t tsc_ticks)
{
    uint64_t hz = tsc_hz(), lhz = lapic_timer_hz();
    uint64_t c = hz ? tsc_ticks * lhz / hz : 0;
    return c == 0 ? 1 : c > 0xFFFFFFFFu ? 0xFFFFFFFFu
                                        : (uint32_t)c;
}

uint64_t wltimer_oneshot(uint64_t after_tsc, wltimer_fn fn)
{
    uint32_t cpu = this_cpu()->index;
    uint32_t count = counts_for(after_tsc);
    uint64_t irq = irq_save();
    drain(cpu);
    slot[cpu].fn = fn;
    slot[cpu].oneshot = 1;
    lapic_timer_periodic(VEC_WL_TIMER, count);
    /* The count starts with the last register write, just done. */
    uint64_t start = rdtsc();
    irq_restore(irq);
    uint64_t lhz = lapic_timer_hz();
    return start + (lhz ? (uint64_t)count * tsc_hz() / lhz : after_tsc);
}

void wltimer_periodic(uint32_t hz, wltimer_fn fn)
{
    uint32_t cpu = this_cpu()->index;
    uint64_t irq = irq_save();
    drain(cpu);
    slot[cpu].fn = fn;
    lapic_timer_periodic(VEC_WL_TIMER, counts_for(tsc_hz() / (hz ? hz : 1)));
    irq_restore(irq);
}

void wltimer_release(void)
{
    uint32_t cpu = this_cpu()->index;
    uint64_t irq = irq_save();
    drain(cpu);
    timer_start_cpu();
    irq_restore(irq);
}

uint64_t wltimer_tsc_per_count_x1000(void)
{
    uint64_t lhz = lapic_timer_hz();
    return lhz ? tsc_hz() * 1000 / lhz : 0;
}
