/* summary.c — one screen of statistics. */
#include "perf/summary.h"
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "console/serial.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "net/netcon.h"
#include "perf/cpusum.h"
#include "perf/wlrun.h"
#include "recorder/dump.h"
#include "recorder/pairing.h"
#include "recorder/schema.h"
#include "recorder/snapshot.h"
#include "recorder/stream.h"
#include "time/stats.h"
#include "time/tsc.h"
#include "time/uptime.h"
#include "trace/trace.h"

#define MAX_TYPES 64

/* The per-CPU table's columns in the summary form (cpusum.h). */
/* clang-format off */
static const struct cpusum_col columns[] = {
    { "recorded", true }, { "overwritten", true }, { "excluded", true }, { "refused", true },
    { "rate/s", true }, { "tick-handler avg", false }, { "late max", false },
};
/* clang-format on */
#define COLUMNS   (sizeof columns / sizeof columns[0])

static uint64_t per_type[MAX_TYPES];
/* Durations of BEGIN/END pairs (recorder/pairing.h: the rule the host's
 * pairs.py uses too), by BEGIN type. */
static struct minmax pair[MAX_TYPES];
static struct pairing pairing;

/* Count one CPU's events by type and time its BEGIN/END pairs. */
static void scan(struct ring_snap *s)
{
    struct trace_event ev;
    struct pairing_open begin;
    uint64_t seq;
    pairing_init(&pairing, trace_pair_roles, trace_pair_roles_count, NULL, NULL);
    for (uint32_t i = 0; ring_snap_next(s, &ev, &seq); i++) {
        per_type[ev.type < MAX_TYPES ? ev.type : 0]++;
        if (pairing_feed(&pairing, &ev, i, &begin) && begin.type < MAX_TYPES)
            minmax_add(&pair[begin.type], ev.tsc - begin.tsc);
    }
}

static uint64_t avg(const struct minmax *m) { return m->n ? m->sum / m->n : 0; }

/* Scan one CPU's ring; print its row of the table (full) or keep its
 * columns for the summary. */
static void cpu_line(uint32_t cpu, struct ring *r, uint64_t uptime_s, bool full)
{
    struct ring_snap s;
    ring_snap_begin(&s, r);
    scan(&s);
    const struct cpu_stats *st = stats_cpu(cpu);
    uint64_t recorded = s.head - s.base, rate = uptime_s ? recorded / uptime_s : recorded;
    if (full) {
        kprintf("%3u %5u %10lu %10lu %8lu %8lu %7lu/s %6lu %6lu %6lu %8lu %8lu\n", cpu,
                cpus[cpu].apic_id, recorded, s.overwritten, s.excluded, s.refused, rate,
                st->tick_handler.min, avg(&st->tick_handler), st->tick_handler.max,
                avg(&st->tick_lateness), st->tick_lateness.max);
        return;
    }
    const int64_t v[COLUMNS] = {
        (int64_t)recorded, (int64_t)s.overwritten, (int64_t)s.excluded, (int64_t)s.refused,
        (int64_t)rate, (int64_t)avg(&st->tick_handler), (int64_t)st->tick_lateness.max
    };
    cpusum_add(cpu, v);
}

void summary_print(uint64_t ignored_keys, uint64_t usb_keys_dropped, bool full)
{
    struct snapshot f;
    if (!snapshot_take(&f))
        return;
    uint64_t uptime_s = tsc_hz() ? (rdtsc() - uptime_boot_tsc()) / tsc_hz() : 0;
    memset(per_type, 0, sizeof per_type);
    memset(pair, 0, sizeof pair);
    kprintf("stats: uptime %lu s, %u CPUs online, TSC %lu Hz, tracing %s, ignored keys %lu, "
            "serial overruns %lu, serial bytes dropped %lu, serial irqs %lu, usb keys dropped "
            "%lu\n",
            uptime_s, cpus_online, tsc_hz(),
            trace_get_mask() & (TRACE_ENABLE | TRACE_PAUSED) ? "on" : "off", ignored_keys,
            serial_overruns(), serial_tx_dropped(), serial_irqs(), usb_keys_dropped);
    netcon_print_stats();                   /* the network, when there is one */
    stream_print_stats();
    if (dump_nowhere_count())
        kprintf("stats: %u dumps asked for had nowhere to go (no UART answered, no stick with "
                "a dump area): nothing was sent\n",
                dump_nowhere_count());
    uint32_t shown = 0;
    for (uint32_t i = 0; i < f.n; i++)
        shown += f.rings[i] != NULL;
    full = full || shown <= CPUSUM_TABLE_MAX;
    cpusum_begin(columns, COLUMNS);
    if (full)
        kprintf("cpu  apic   recorded overwritten excluded refused    rate  tick-handler "
                "min/avg/max  late avg/max (TSC ticks)\n");
    for (uint32_t i = 0; i < f.n; i++)
        if (f.rings[i])
            cpu_line(i, f.rings[i], uptime_s, full);
    if (!full) {
        kprintf("stats: %u CPUs, more than a screen's table (S prints it); over the CPUs "
                "(TSC ticks for the timer):\n",
                shown);
        cpusum_print(workload_line);
    }
    kprintf("events held per type:");
    for (unsigned t = 0; t < MAX_TYPES; t++) {
        const struct trace_event_info *info = trace_event_info((uint16_t)t);
        if (per_type[t])
            kprintf(" %s=%lu", info ? info->name : "?", per_type[t]);
    }
    kprintf("\n");
    for (unsigned t = 0; t < MAX_TYPES; t++)
        if (pair[t].n)
            kprintf("pair %.*s: n=%lu min/avg/max %lu/%lu/%lu TSC ticks\n",
                    (int)strlen(trace_event_info((uint16_t)t)->name) - 6,  /* - "_BEGIN" */
                    trace_event_info((uint16_t)t)->name, pair[t].n, pair[t].min, avg(&pair[t]),
                    pair[t].max);
    snapshot_release(&f);
}
