/* dump.c — pause, encode every ring to the console port, resume. */
#include "trace/dump.h"
#include "console.h"
#include "cpu.h"
#include "percpu.h"
#include "serial.h"
#include "smp.h"
#include "status.h"
#include "tsc.h"
#include "perf/stats.h"
#include "trace/encode.h"
#include "trace/rings.h"
#include "trace/trace.h"

#define QUIESCE_US 10000              /* a trace point takes nanoseconds */

static struct dump_facts facts;
static uint32_t dumps;

void dump_set_facts(const struct dump_facts *f) { facts = *f; }

static void to_console(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    console_write_uart_locked(s, n);    /* the lines go to the UART only */
    status_dump_line(s, n);             /* the screen shows progress */
}

static unsigned collect(struct ring *rings[MAX_CPUS])
{
    unsigned n = smp_slots();
    for (unsigned i = 0; i < n; i++)
        rings[i] = cpus[i].online ? rings_of(i) : NULL;
    return n;
}

/* Pause tracing everywhere and wait for writers in flight; returns the
 * saved mask. Stragglers are reported: the snapshot excludes their slot. */
static uint32_t pause_all(struct ring *rings[], unsigned n)
{
    uint32_t saved = trace_pause();
    unsigned busy = trace_quiesce(rings, n, tsc_from_us(QUIESCE_US));
    if (busy)
        kprintf("dump: %u CPUs still writing after %u us; their in-flight events are excluded\n",
                busy, QUIESCE_US);
    return saved;
}

/* Pause, wait for writers in flight, copy every ring to its shadow and
 * resume; without shadows, stay paused on the live rings. */
void dump_freeze(struct frozen *f)
{
    f->n = collect(f->rings);
    f->saved_mask = pause_all(f->rings, f->n);
    struct ring *copy[MAX_CPUS];
    f->copied = false;
    for (unsigned i = 0; i < f->n; i++) {
        copy[i] = f->rings[i] ? rings_shadow_copy(i) : NULL;
        if (f->rings[i] && !copy[i])
            return;
    }
    trace_resume(f->saved_mask);
    for (unsigned i = 0; i < f->n; i++)
        f->rings[i] = copy[i];
    f->copied = true;
}

void dump_thaw(struct frozen *f)
{
    if (!f->copied)
        trace_resume(f->saved_mask);
}

uint64_t dump_all(void)
{
    uint32_t no = ++dumps;
    trace(DUMP_BEGIN, no, 0);
    struct frozen f;
    dump_freeze(&f);
    uint32_t apic[MAX_CPUS];
    for (unsigned i = 0; i < f.n; i++)
        apic[i] = cpus[i].apic_id;
    const struct dump_extra extras[] = {
        { "fw", facts.fw, 0 },            { "found", NULL, facts.found },
        { "parked", NULL, facts.parked }, { "failed", NULL, facts.failed },
        { "online", NULL, cpus_online },  { "tsc_src", facts.tsc_src, 0 },
        { "invariant_tsc", NULL, (uint64_t)facts.invariant_tsc },
        { "tsc_warp", NULL, facts.tsc_warp }, { "timer_hz", NULL, facts.timer_hz },
        { "uptime_tsc", NULL, rdtsc() - stats_boot_tsc() }, { "capacity", NULL, rings_capacity() },
        { "serial_overruns", NULL, serial_overruns() },
        { "serial_tx_dropped", NULL, serial_tx_dropped() },
        { "no_ring_events", NULL, trace_no_ring_count() },
        { "snapshot", f.copied ? "copy" : "paused", 0 },
    };
    const struct dump_meta meta = { no, tsc_hz(), apic, extras, sizeof extras / sizeof extras[0] };
    const struct dump_sink sink = { to_console, NULL };

    console_lock();
    uint64_t events = dump_encode(&sink, &meta, f.rings, f.n);
    console_unlock();
    dump_thaw(&f);
    trace(DUMP_END, no, events);
    return events;
}

void dump_with_rings_paused(void (*fn)(void))
{
    struct ring *rings[MAX_CPUS];
    unsigned n = collect(rings);
    uint32_t saved = pause_all(rings, n);
    fn();
    trace_resume(saved);
}
