/* hwlat.c — the hwlat workload: hardware latency on every CPU at once
 * (like Linux's hwlat tracer, which uses one CPU at a time).
 *
 * In each `window`, every CPU spins for `width` with interrupts off,
 * reading the TSC back to back. Nothing the kernel does can stop it then,
 * so a jump between two reads above `thresh` is time taken from the CPU
 * by something the OS cannot see: an SMI, a hypervisor, a machine check,
 * power management. Each such gap is recorded as HWLAT_GAP(length, SMIs
 * seen meanwhile); where Intel's SMI counter exists it is read at every
 * gap (outside the timed reads), so a gap with smis > 0 is an SMI. Per
 * window: HWLAT_WINDOW(time spun, SMIs); per CPU at the end: HWLAT_CPU
 * (gaps, longest) and HWLAT_LOST(total gap time, total time spun). */
#include "arch/cpu.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "perf/smi.h"
#include "perf/workload.h"
#include "time/tsc.h"
#include "trace/trace.h"

#define START_TIMEOUT_US 1000000

static const struct wl_param params[] = {
    { "width", "ms", 500, 1, 60000, false },
    { "window", "ms", 1000, 1, 60000, false },
    { "windows", "", 2, 1, 1000, false },
    { "thresh", "us", 10, 1, 1000000, false },
    { NULL, NULL, 0, 0, 0, false },
};

struct result {
    uint64_t gaps, max, lost, spun, smis;
} __attribute__((aligned(64)));

static struct result res[MAX_CPUS];
static uint64_t width_tsc, window_tsc, windows, thresh_tsc;
static bool have_smi;

static uint64_t smi_now(void) { return have_smi ? smi_read() : SMI_UNKNOWN; }

/* One window's spin; returns the time spun. */
static uint64_t spin(struct result *r)
{
    uint64_t flags = irq_save();
    uint64_t smi_start = smi_now(), smi_prev = smi_start;
    uint64_t start = rdtsc(), prev = start, end = start + width_tsc, now;
    do {
        now = rdtsc();
        uint64_t gap = now - prev;
        if (gap > thresh_tsc) {
            uint64_t smi = smi_now();
            trace(HWLAT_GAP, gap, have_smi ? smi - smi_prev : SMI_UNKNOWN);
            smi_prev = smi;
            r->gaps++;
            r->lost += gap;
            r->max = gap > r->max ? gap : r->max;
            now = rdtsc();          /* recording the gap is not a gap */
        }
        prev = now;
    } while (now < end);
    uint64_t smis = have_smi ? smi_now() - smi_start : SMI_UNKNOWN;
    irq_restore(flags);
    trace(HWLAT_WINDOW, now - start, smis);
    if (have_smi)
        r->smis += smis;
    return now - start;
}

static void measure(uint32_t cpu, void *arg)
{
    (void)arg;
    struct result *r = &res[cpu];
    *r = (struct result){ 0 };
    oncpu_barrier(tsc_from_us(START_TIMEOUT_US));   /* windows line up */
    uint64_t base = rdtsc();
    for (uint64_t w = 0; w < windows; w++) {
        /* Between windows: idle with interrupts on (the tick wakes us). */
        while (rdtsc() < base + w * window_tsc)
            __asm__ volatile("sti; hlt" ::: "memory");
        r->spun += spin(r);
    }
    trace(HWLAT_CPU, r->gaps, r->max);
    trace(HWLAT_LOST, r->lost, r->spun);
}

/* The per-CPU table's columns, for its summary form past CPUSUM_TABLE_MAX CPUs. */
/* clang-format off */
static const struct cpusum_col columns[] = {
    { "gaps", true }, { "max(us)", false }, { "lost(us)", true }, { "lost(ppm)", false },
    { "smis", true },
};
/* clang-format on */

static void run(const uint64_t *v)
{
    uint64_t width = v[0], window = v[1];
    if (width > window) {
        kprintf("hwlat: width %lu ms is longer than the window; using width = window\n", width);
        width = window;
    }
    width_tsc = tsc_from_us(width * 1000);
    window_tsc = tsc_from_us(window * 1000);
    windows = v[2];
    thresh_tsc = tsc_from_us(v[3]);
    const char *why;
    have_smi = smi_available(&why);
    bool ran[MAX_CPUS];
    uint64_t timeout = tsc_from_us(windows * window * 1000 + 2 * START_TIMEOUT_US);
    workload_all(measure, NULL, timeout, ran);

    kprintf("hwlat: gaps above %lu us with interrupts off, %lu x %lu ms per CPU; SMI counter: "
            "%s%s\n",
            v[3], windows, width, have_smi ? "yes, " : "no, ", why);
    uint32_t n = oncpu_slots();
    bool table = wl_table_begin(n, "cpu     gaps   max(us) lost(us)  lost(ppm)     smis", columns,
                                have_smi ? 5 : 4);
    uint64_t total = 0, worst = 0;
    for (uint32_t c = 0; c < n; c++) {
        const struct result *r = &res[c];
        if (!ran[c]) {
            wl_table_absent(table, c);
            continue;
        }
        total += r->gaps;
        worst = r->max > worst ? r->max : worst;
        const int64_t v[] = { (int64_t)r->gaps, (int64_t)tsc_to_us(r->max),
                              (int64_t)tsc_to_us(r->lost),
                              (int64_t)(r->spun ? r->lost * 1000000 / r->spun : 0),
                              (int64_t)r->smis };
        cpusum_add(c, v);
        if (!table)
            continue;
        char smis[24] = "-";
        if (have_smi)
            ksnprintf(smis, sizeof smis, "%lu", r->smis);
        kprintf("%3u %8ld %9ld %8ld %10ld %8s\n", c, v[0], v[1], v[2], v[3], smis);
    }
    wl_table_end(table, "hwlat", n, "");
    kprintf("hwlat: %lu gaps, longest %lu us\n", total, tsc_to_us(worst));
}

const struct workload wl_hwlat = { .params = params, .run = run };
