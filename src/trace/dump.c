/* dump.c — pause, encode every ring to the console port, resume. */
#include "trace/dump.h"
#include "console.h"
#include "cpu.h"
#include "cpuwatch.h"
#include "format.h"
#include "kstring.h"
#include "percpu.h"
#include "serial.h"
#include "smp.h"
#include "status.h"
#include "tsc.h"
#include "perf/stats.h"
#include "trace/dumpstick.h"
#include "trace/encode.h"
#include "trace/dumpid.h"
#include "trace/rings.h"
#include "trace/trace.h"

#define QUIESCE_US 10000              /* a trace point takes nanoseconds */
#define CLAIM_US   (60 * 1000000ull)  /* a whole dump at 115200 baud: ~30 s */
#define NO_OWNER   0xFFFFFFFFu

static struct dump_facts facts;
static uint32_t dumps;
static volatile uint32_t owner = NO_OWNER;   /* CPU reading the rings */
static uint32_t depth;                       /* its nested claims */
static bool paused;                          /* it holds tracing paused */
static uint32_t paused_saved;

void dump_set_facts(const struct dump_facts *f) { facts = *f; }

static uint32_t me(void) { return gs_ready() ? this_cpu()->index : 0; }

bool dump_claim(uint64_t wait_us)
{
    uint32_t cpu = me(), none = NO_OWNER;
    if (owner == cpu) {
        depth++;
        return true;
    }
    uint64_t t0 = rdtsc(), limit = tsc_from_us(wait_us);
    while (!__atomic_compare_exchange_n(&owner, &none, cpu, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
        if (rdtsc() - t0 > limit) {
            kprintf("dump: CPU %u still holds the rings after %lu s; CPU %u goes on without\n",
                    none, wait_us / 1000000, cpu);
            return false;
        }
        none = NO_OWNER;
        cpu_relax();
    }
    depth = 1;
    return true;
}

void dump_release(void)
{
    if (--depth == 0)
        __atomic_store_n(&owner, NO_OWNER, __ATOMIC_RELEASE);
}

bool dump_held_here(void) { return owner == me(); }

void dump_abandon(void)
{
    if (!dump_held_here())
        return;
    if (paused)
        trace_resume(paused_saved);
    paused = false;
    console_unlock_all();
    depth = 0;
    __atomic_store_n(&owner, NO_OWNER, __ATOMIC_RELEASE);
}

void dump_stop_tracing(void)
{
    trace_enable(false);
    __atomic_and_fetch(&paused_saved, ~TRACE_ENABLE, __ATOMIC_SEQ_CST);
}

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

/* Pause tracing everywhere and wait (bounded) for writers in flight;
 * the snapshot excludes a straggler's slot. Names the stragglers in busy
 * and the CPUs that stopped answering in silent. */
static void pause_all(struct ring *rings[], unsigned n, char *busy, char *silent, size_t cap)
{
    paused_saved = trace_pause();
    paused = true;
    unsigned left = trace_quiesce(rings, n, tsc_from_us(QUIESCE_US));
    size_t at = 0;
    busy[0] = '\0';
    for (unsigned i = 0; left && i < n; i++)
        if (rings[i] && !ring_quiescent(rings[i]) && at + 12 < cap) {
            at += (size_t)ksnprintf(busy + at, cap - at, "%s%u", at ? "," : "", i);
            kprintf("dump: CPU %u still writing after %u us; its in-flight event is excluded\n",
                    i, QUIESCE_US);
        }
    cpuwatch_list(silent, cap, true);
}

static void resume(void)
{
    paused = false;
    trace_resume(paused_saved);
}

/* Pause, wait for writers in flight, copy every ring to its shadow and
 * resume; without shadows, stay paused on the live rings. This CPU's
 * interrupts are off for those milliseconds only (never for a dump's
 * transfer): its own timer tick then waits for the resume instead of
 * being refused. */
bool dump_freeze(struct frozen *f)
{
    if (!dump_claim(CLAIM_US))
        return false;
    uint64_t irq = irq_save();
    f->n = collect(f->rings);
    pause_all(f->rings, f->n, f->busy, f->silent, sizeof f->silent);
    struct ring *copy[MAX_CPUS];
    f->copied = true;
    for (unsigned i = 0; i < f->n && f->copied; i++) {
        copy[i] = f->rings[i] ? rings_shadow_copy(i) : NULL;
        f->copied = !f->rings[i] || copy[i];
    }
    if (f->copied) {
        resume();
        for (unsigned i = 0; i < f->n; i++)
            f->rings[i] = copy[i];
    }
    irq_restore(irq);
    return true;
}

void dump_thaw(struct frozen *f)
{
    if (!f->copied)
        resume();
    dump_release();
}

/* The stick is written by the boot CPU only, and never from a fault or
 * NMI: that CPU may have been stopped inside the USB driver, which is not
 * re-entrant. Those dumps go to the console port alone. */
static bool stick_ok(const struct dump_request *rq)
{
    return me() == 0 && rq->fault_cpu < 0 && !rq->quiet && strcmp(rq->trigger, "nmi") != 0;
}

static uint64_t encode(const struct dump_meta *meta, struct ring *const rings[], unsigned n,
                       bool stick)
{
    struct dump_sink sink = { to_console, NULL };
    dumpstick_open(&sink, stick);       /* trace.dump_to=: the boot stick too */
    console_lock();
    uint64_t events = dump_encode(&sink, meta, rings, n);
    console_unlock();
    dumpstick_close();
    return events;
}

uint64_t dump_run(const struct dump_request *rq)
{
    uint32_t no = ++dumps;
    if (!rq->quiet)
        trace(DUMP_BEGIN, no, 0);
    struct frozen f;
    if (!dump_freeze(&f))
        return 0;
    uint32_t apic[MAX_CPUS];
    for (unsigned i = 0; i < f.n; i++)
        apic[i] = cpus[i].apic_id;
    bool fault = rq->fault_cpu >= 0;
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
        { "trigger", rq->trigger, 0 },
        { fault ? "fault_cpu" : NULL, NULL, (uint64_t)rq->fault_cpu },
        { fault ? "fault_vector" : NULL, NULL, rq->fault_vector },
        { f.silent[0] ? "silent_cpus" : NULL, f.silent, 0 },
        { f.busy[0] ? "busy_cpus" : NULL, f.busy, 0 },
    };
    const struct dump_meta meta = { no, tsc_hz(), apic, extras, sizeof extras / sizeof extras[0],
                                    boot_nonce(), false };
    uint64_t events = encode(&meta, f.rings, f.n, stick_ok(rq));
    dump_thaw(&f);
    if (!rq->quiet)
        trace(DUMP_END, no, events);
    return events;
}

uint64_t dump_all(void)
{
    const struct dump_request rq = { "key", -1, 0, false };
    return dump_run(&rq);
}

uint64_t dump_rings_of_previous_boot(struct ring *const rings[], unsigned n, uint64_t hz,
                                     const uint32_t *apic_ids, const struct dump_extra *extras,
                                     unsigned nextras)
{
    if (!dump_claim(CLAIM_US))
        return 0;
    uint32_t no = ++dumps;
    trace(DUMP_BEGIN, no, 0);
    const struct dump_meta meta = { no, hz, apic_ids, extras, nextras, boot_nonce(), true };
    uint64_t events = encode(&meta, rings, n, me() == 0);
    dump_release();
    trace(DUMP_END, no, events);
    return events;
}

void dump_with_rings_paused(void (*fn)(void))
{
    struct ring *rings[MAX_CPUS];
    char busy[64], silent[64];
    if (!dump_claim(CLAIM_US))
        return;
    unsigned n = collect(rings);
    pause_all(rings, n, busy, silent, sizeof busy);
    fn();
    resume();
    dump_release();
}
