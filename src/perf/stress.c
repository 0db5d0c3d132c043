/* stress.c — the stress workload: the ring's reliability proof.
 *
 * Every CPU records events as fast as it can (STRESS) while a fast LAPIC
 * timer interrupt records more in the middle of them (STRESS_IRQ): the
 * nested-writer case the ring is built for. Each event carries a checksum
 * of its own fields (stresssum.h) and a per-source attempt count in a0,
 * and its flags byte says how many attempts of that source since its
 * previous recorded event were not recorded (refused while a dump paused
 * tracing, or tracing off). So a dump can prove, event by event, that
 * nothing is torn or stale, that seq is contiguous, and that every attempt
 * is either in the ring or counted. The boot CPU keeps answering hotkeys,
 * so `d` dumps while all CPUs write. Each CPU ends with STRESS_CPU
 * (attempts, refused) over both sources.
 *
 * The trace point is trace_emit_at (trace.h), the one trace() uses, given
 * the TSC and flags: the checksum must cover the TSC the ring stores, so
 * it is read here, before the trace point decides. */
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "dev/inputpoll.h"
#include "lib/kprintf.h"
#include "perf/stresssum.h"
#include "perf/wltimer.h"
#include "perf/workload.h"
#include "time/tsc.h"
#include "trace/trace.h"

#define CHECK_EVERY   1024               /* attempts between two looks at the clock */
#define KEYS_EVERY_US 1000             /* the boot CPU polls the keys this often */
#define FLAGS_MAX     255

static const struct wl_param params[] = {
    { "secs", "s", 10, 1, 3600, false },
    { "irq_hz", "", 10000, 100, 100000, false },
    { NULL, NULL, 0, 0, 0, false },
};

/* One source of events on one CPU: the main loop or the interrupt. */
struct source {
    uint64_t count;                    /* attempts so far */
    uint64_t unrecorded;               /* since this source's last recorded event */
    uint64_t refused;                  /* refused while paused (total) */
};

static struct cpu_state {
    struct source main, irq;
} __attribute__((aligned(64))) state[MAX_CPUS];

static uint64_t duration_tsc, irq_hz;

static void emit(struct source *s, uint16_t type, uint8_t cpu)
{
    uint64_t count = s->count++;
    uint8_t flags = s->unrecorded > FLAGS_MAX ? FLAGS_MAX : (uint8_t)s->unrecorded;
    uint64_t tsc = trace_rdtsc();
    enum trace_outcome o = trace_emit_at(type, TRACE_CATBIT_STRESS, TRACE_RET_RING, flags, tsc, count,
                                         stress_checksum(tsc, type, cpu, flags, count));
    if (o == TRACE_RECORDED) {
        s->unrecorded = 0;
        return;
    }
    s->unrecorded++;
    s->refused += o == TRACE_REFUSED;
}

static void on_irq(uint64_t entry_tsc)
{
    (void)entry_tsc;
    uint32_t cpu = this_cpu()->index;
    emit(&state[cpu].irq, TRACE_EV_STRESS_IRQ, (uint8_t)cpu);
}

static void hammer(uint32_t cpu, void *arg)
{
    (void)arg;
    struct cpu_state *st = &state[cpu];
    *st = (struct cpu_state){ 0 };
    wltimer_periodic((uint32_t)irq_hz, on_irq);
    uint64_t now = rdtsc(), end = now + duration_tsc, keys = now;
    while (now < end) {
        for (unsigned i = 0; i < CHECK_EVERY; i++)
            emit(&st->main, TRACE_EV_STRESS, (uint8_t)cpu);
        now = rdtsc();
        /* `d` dumps while everyone writes. Not at every check: reading the
         * UART is slow (under QEMU it takes the lock the emulated
         * interrupts need, too). */
        if (cpu == 0 && now - keys >= tsc_from_us(KEYS_EVERY_US)) {
            inputpoll_run();            /* hotkey_poll, stream_poll */
            keys = now = rdtsc();
        }
    }
    wltimer_release();                 /* no STRESS_IRQ after this */
    trace(STRESS_CPU, st->main.count + st->irq.count, st->main.refused + st->irq.refused);
}

/* The per-CPU table's columns, for its summary form past CPUSUM_TABLE_MAX CPUs. */
/* clang-format off */
static const struct cpusum_col columns[] = {
    { "attempts", true }, { "irq-attempts", true }, { "refused", true },
};
/* clang-format on */

static void run(const uint64_t *v)
{
    duration_tsc = tsc_from_us(v[0] * 1000000);
    irq_hz = v[1];
    wltimer_init();
    bool ran[MAX_CPUS];
    kprintf("stress: every CPU traces flat out for %lu s with a %lu Hz timer interrupt "
            "tracing inside; press d to dump meanwhile\n",
            v[0], irq_hz);
    /* The boot CPU may spend long in dumps it is asked for: wait generously. */
    workload_all(hammer, NULL, duration_tsc * 4 + tsc_from_us(60000000), ran);
    uint32_t n = oncpu_slots();
    bool table = wl_table_begin(n, "cpu     attempts  irq-attempts      refused", columns,
                                sizeof columns / sizeof columns[0]);
    for (uint32_t c = 0; c < n; c++) {
        const struct cpu_state *st = &state[c];
        if (!ran[c]) {
            wl_table_absent(table, c);
            continue;
        }
        const int64_t v[] = { (int64_t)st->main.count, (int64_t)st->irq.count,
                              (int64_t)(st->main.refused + st->irq.refused) };
        if (table)
            kprintf("%3u %12ld %13ld %12ld\n", c, v[0], v[1], v[2]);
        cpusum_add(c, v);
    }
    wl_table_end(table, "stress", n, "");
}

const struct workload wl_stress = { .params = params, .run = run };
