/* timerlat.c — the timer workload: LAPIC timer wake-up latency on every
 * CPU at once (like cyclictest, one measuring thread per CPU).
 *
 * Each CPU arms a one-shot LAPIC timer `interval` ahead, halts (or, with
 * spin=1, spins with interrupts on) until it fires, and takes latency =
 * TSC at handler entry - deadline. The deadline comes from the LAPIC count
 * programmed, so it includes neither the count's rounding nor our own
 * arming time; it does depend on the LAPIC timer's calibration against
 * the TSC (done once at boot, over 10 ms). Every sample is recorded as
 * TIMER_WAKE(sample, latency ticks); each CPU ends with TIMER_CPU(samples,
 * missed) and TIMER_RANGE(min, max). The periodic tick is stopped while
 * the CPU measures. */
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "lib/kprintf.h"
#include "mm/mem.h"
#include "perf/wltimer.h"
#include "perf/workload.h"
#include "time/tsc.h"
#include "trace/trace.h"

#define MISS_AFTER_US 100000          /* a deadline this far past counts as missed */
/* Histogram: [0] early (fired before its deadline as the TSC sees it:
 * LAPIC timer calibration error, or an emulator whose timer and TSC
 * disagree), [1] under 1 us, [k] [2^(k-2), 2^(k-1)) us, the last: the rest. */
#define HIST_BUCKETS  23

static const struct wl_param params[] = {
    { "interval", "us", 1000, 10, 1000000, false },
    { "samples", "", 200, 1, 1000000, false },
    { "spin", "", 0, 0, 1, false },
    { NULL, NULL, 0, 0, 0, false },
};

struct result {
    uint64_t samples, missed;
    int64_t min, max, sum;
    uint64_t hist[HIST_BUCKETS];
    volatile uint64_t fired_tsc;       /* written by the handler */
    volatile uint32_t fired;
} __attribute__((aligned(64)));

static struct result *res;          /* [slots]: sized at the first run */
static uint64_t interval_tsc, nsamples, spin;

static void on_fire(uint64_t entry_tsc)
{
    struct result *r = &res[this_cpu()->index];
    r->fired_tsc = entry_tsc;
    r->fired = 1;
}

static unsigned bucket(int64_t lat_tsc)
{
    if (lat_tsc < 0)
        return 0;
    int64_t us = workload_ns(lat_tsc) / 1000;
    unsigned b = 1;
    while (us > 0 && b < HIST_BUCKETS - 1) {
        us >>= 1;
        b++;
    }
    return b;
}

/* Wait for the timer with interrupts on: hlt (the sti before it takes
 * effect after hlt begins, so the interrupt cannot slip in between) or spin. */
static bool wait_fired(struct result *r, uint64_t give_up)
{
    while (!r->fired && rdtsc() < give_up) {
        if (spin)
            cpu_relax();
        else
            __asm__ volatile("cli; cmpl $0, %0; jne 1f; sti; hlt; 1: sti"
                             : : "m"(r->fired) : "memory");
    }
    return r->fired;
}

static void measure(uint32_t cpu, void *arg)
{
    (void)arg;
    struct result *r = &res[cpu];
    *r = (struct result){ .min = INT64_MAX, .max = INT64_MIN };
    for (uint64_t s = 0; s < nsamples; s++) {
        r->fired = 0;
        uint64_t deadline = wltimer_oneshot(interval_tsc, on_fire);
        if (!wait_fired(r, deadline + tsc_from_us(MISS_AFTER_US))) {
            r->missed++;
            continue;
        }
        int64_t lat = (int64_t)(r->fired_tsc - deadline);
        trace(TIMER_WAKE, s, (uint64_t)lat);
        r->samples++;
        r->sum += lat;
        r->min = lat < r->min ? lat : r->min;
        r->max = lat > r->max ? lat : r->max;
        r->hist[bucket(lat)]++;
    }
    wltimer_release();
    trace(TIMER_CPU, r->samples, r->missed);
    if (r->samples)
        trace(TIMER_RANGE, (uint64_t)r->min, (uint64_t)r->max);
}

static void print_histogram(uint32_t n)
{
    uint64_t all[HIST_BUCKETS] = { 0 }, most = 0;
    for (uint32_t c = 0; c < n; c++)
        for (unsigned b = 0; b < HIST_BUCKETS; b++)
            all[b] += res[c].hist[b];
    for (unsigned b = 0; b < HIST_BUCKETS; b++)
        most = all[b] > most ? all[b] : most;
    kprintf("timer: wake-up latency histogram, all CPUs (us)\n");
    for (unsigned b = 0; b < HIST_BUCKETS; b++) {
        if (!all[b])
            continue;
        char bar[41];
        unsigned len = (unsigned)(all[b] * 40 / (most ? most : 1));
        for (unsigned i = 0; i < len; i++)
            bar[i] = '#';
        bar[len ? len : 0] = '\0';
        if (b == 0)
            kprintf("%17s %8lu %s\n", "early", all[b], bar);
        else if (b == 1)
            kprintf("%17s %8lu %s\n", "< 1", all[b], bar);
        else if (b == HIST_BUCKETS - 1)
            kprintf("%8lu and more %8lu %s\n", 1ul << (b - 2), all[b], bar);
        else
            kprintf("%8lu - %6lu %8lu %s\n", 1ul << (b - 2), (1ul << (b - 1)) - 1, all[b], bar);
    }
}

/* The per-CPU table's columns, for its summary form past CPUSUM_TABLE_MAX CPUs. */
/* clang-format off */
static const struct cpusum_col columns[] = {
    { "samples", true }, { "missed", true }, { "min", false }, { "avg", false }, { "max", false },
};
/* clang-format on */

static void run(const uint64_t *v)
{
    interval_tsc = tsc_from_us(v[0]);
    nsamples = v[1];
    spin = v[2];
    uint32_t n = oncpu_slots();
    if (!res && !(res = mem_alloc((uint64_t)n * sizeof *res, 64))) {
        kprintf("timer: no memory for %u CPUs' results; not run\n", n);
        return;
    }
    wltimer_init();
    bool ran[MAX_CPUS];
    uint64_t timeout = tsc_from_us(nsamples * (v[0] + MISS_AFTER_US) + 1000000);
    workload_all(measure, NULL, timeout, ran);
    kprintf("timer: one-shot LAPIC timer every %lu us, %s until it fires; latency = handler "
            "entry - deadline (us)\n",
            v[0], spin ? "spinning" : "halted");
    bool table = wl_table_begin(n, "cpu  samples missed      min      avg      max", columns,
                                sizeof columns / sizeof columns[0]);
    for (uint32_t c = 0; c < n; c++) {
        const struct result *r = &res[c];
        if (!ran[c]) {
            wl_table_absent(table, c);
            continue;
        }
        int64_t avg = r->samples ? r->sum / (int64_t)r->samples : 0;
        const int64_t v[] = { (int64_t)r->samples, (int64_t)r->missed,
                              r->samples ? workload_ns(r->min) / 1000 : 0, workload_ns(avg) / 1000,
                              r->samples ? workload_ns(r->max) / 1000 : 0 };
        if (table)
            kprintf("%3u %8ld %6ld %8ld %8ld %8ld\n", c, v[0], v[1], v[2], v[3], v[4]);
        cpusum_add(c, v);
    }
    wl_table_end(table, "timer", n, " (latency in us)");
    print_histogram(n);
}

const struct workload wl_timer = { .params = params, .run = run };
