/* summary.c — one screen of statistics. */
#include "perf/summary.h"
#include "console.h"
#include "cpu.h"
#include "hotkey.h"
#include "kstring.h"
#include "percpu.h"
#include "serial.h"
#include "tsc.h"
#include "perf/stats.h"
#include "trace/dump.h"
#include "trace/schema.h"
#include "trace/trace.h"

#define MAX_TYPES 64
/* Open BEGINs kept per CPU; past it the oldest is given up as unmatched
 * (the host's scripts/btlib/pairs.py uses the same depth). */
#define MAX_DEPTH 64

static uint64_t per_type[MAX_TYPES];
/* Durations of BEGIN/END pairs (events.def TRACE_PAIR), by BEGIN type. */
static struct minmax pair[MAX_TYPES];

/* The nesting rule (docs/dump-format.md, "BEGIN/END pairs"): a per-CPU
 * stack of open BEGINs, walked in ring order. An END closes the innermost
 * open BEGIN of its pair with the same a0; the BEGINs above that one are
 * unmatched and dropped, and an END with no such BEGIN is unmatched. An
 * END whose TSC is before its BEGIN's makes no pair. */
static struct open { uint16_t begin; uint64_t a0, tsc; } stack[MAX_DEPTH];
static unsigned depth;

static void push(const struct trace_event *ev)
{
    if (depth == MAX_DEPTH) {
        memmove(stack, stack + 1, sizeof stack[0] * (MAX_DEPTH - 1));
        depth--;
    }
    stack[depth++] = (struct open){ ev->type, ev->a0, ev->tsc };
}

static void close_pair(const struct trace_event *ev, uint16_t begin)
{
    for (unsigned k = depth; k-- > 0;) {
        if (stack[k].begin != begin || stack[k].a0 != ev->a0)
            continue;
        if (ev->tsc >= stack[k].tsc && begin < MAX_TYPES)
            minmax_add(&pair[begin], ev->tsc - stack[k].tsc);
        depth = k;
        return;
    }
}

/* Count one CPU's events by type and time its BEGIN/END pairs. */
static void scan(struct ring_snap *s)
{
    struct trace_event ev;
    uint64_t seq;
    depth = 0;
    while (ring_snap_next(s, &ev, &seq)) {
        per_type[ev.type < MAX_TYPES ? ev.type : 0]++;
        const struct trace_event_info *info = trace_event_info(ev.type);
        uint16_t partner = trace_pair_of(ev.type);
        if (!info || !partner)
            continue;
        if (info->kind == TRACE_KIND_BEGIN)
            push(&ev);
        else if (info->kind == TRACE_KIND_END)
            close_pair(&ev, partner);
    }
}

static uint64_t avg(const struct minmax *m) { return m->n ? m->sum / m->n : 0; }

static void cpu_line(uint32_t cpu, struct ring *r, uint64_t uptime_s)
{
    struct ring_snap s;
    ring_snap_begin(&s, r);
    scan(&s);
    const struct cpu_stats *st = stats_cpu(cpu);
    uint64_t recorded = s.head - s.base;
    kprintf("%3u %5u %10lu %10lu %8lu %8lu %7lu/s %6lu %6lu %6lu %8lu %8lu\n", cpu,
            cpus[cpu].apic_id, recorded, s.overwritten, s.excluded, s.refused,
            uptime_s ? recorded / uptime_s : recorded, st->tick_handler.min,
            avg(&st->tick_handler), st->tick_handler.max, avg(&st->tick_lateness),
            st->tick_lateness.max);
}

void summary_print(void)
{
    struct frozen f;
    if (!dump_freeze(&f))
        return;
    uint64_t uptime_s = tsc_hz() ? (rdtsc() - stats_boot_tsc()) / tsc_hz() : 0;
    memset(per_type, 0, sizeof per_type);
    memset(pair, 0, sizeof pair);
    kprintf("stats: uptime %lu s, %u CPUs online, TSC %lu Hz, tracing %s, ignored keys %lu, "
            "serial overruns %lu, serial bytes dropped %lu, serial irqs %lu\n", uptime_s,
            cpus_online, tsc_hz(),
            trace_get_mask() & (TRACE_ENABLE | TRACE_PAUSED) ? "on" : "off", hotkey_ignored(),
            serial_overruns(), serial_tx_dropped(), serial_irqs());
    kprintf("cpu  apic   recorded overwritten excluded refused    rate  tick-handler min/avg/max"
            "  late avg/max (TSC ticks)\n");
    for (uint32_t i = 0; i < f.n; i++)
        if (f.rings[i])
            cpu_line(i, f.rings[i], uptime_s);
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
    dump_thaw(&f);
}
