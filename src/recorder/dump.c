/* dump.c — encode a snapshot of every ring over the network first
 * (dumpnet.h), then to the console port and the stick. */
#include "recorder/dump.h"
#include "arch/percpu.h"
#include "console/status.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "recorder/dumpfacts.h"
#include "recorder/dumpid.h"
#include "recorder/dumpnet.h"
#include "recorder/dumpstick.h"
#include "recorder/encode.h"
#include "recorder/machine.h"
#include "recorder/snapshot.h"
#include "recorder/stream.h"
#include "time/tsc.h"
#include "trace/trace.h"

static uint32_t nowhere;                /* dumps asked for with no way out */

static void to_console(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    console_write_dump_locked(s, n);    /* the lines go to the wire only */
}

_Static_assert(SNAPSHOT_CLAIM_US > DUMPNET_WAIT_MAX_US,
               "a CPU waiting for a dump outwaits its network confirmation");

/* Each line of a dump: a sign of life for the CPUs waiting for the rings
 * (snapshot.h), and where the dump stands on the status row. */
static void to_status(const struct dump_progress *p)
{
    snapshot_progress();
    status_dump_progress(p->dump_no, p->lines, p->events_sent, p->events_total, p->done);
}

/* The network's lines when other sinks follow (they show the status). */
static void net_lines(const struct dump_progress *p)
{
    (void)p;
    snapshot_progress();
}

/* The stick is written by the boot CPU only, and never from a fault or
 * NMI: that CPU may have been stopped inside the USB driver, which is not
 * re-entrant. Those dumps go over the network and the console port only. */
static bool stick_ok(const struct dump_request *rq)
{
    return this_cpu_index() == 0 && rq->fault_cpu < 0;   /* fault and NMI dumps name a CPU */
}

/* The network first (it goes at its own speed and the host confirms
 * it), then the serial console and the stick, from the same snapshot. */
static uint64_t encode(const struct dump_meta *meta, struct ring *const rings[], unsigned n,
                       bool stick, enum dumpnet_cause cause)
{
    uint64_t events = 0;
    bool others = !dumpnet_only() && (console_dump_sink_present() || dumpstick_would_take(stick));
    if (dumpnet_open(meta, cause)) {
        status_dump_route("over the network");
        console_lock();                 /* no other text meanwhile, as on the serial line */
        events = dumpnet_send(meta, rings, n, others ? net_lines : to_status);
        console_unlock();
        dumpnet_close(meta, rings, n);  /* the host's confirmation; the snapshot is kept */
        if (!others)
            return events;
    }
    bool uart = console_dump_sink_present(), to_stick = dumpstick_would_take(stick);
    status_dump_route(uart && to_stick ? "on the UART and to the stick"
                      : uart           ? "on the UART"
                                       : "to the stick");
    struct dump_sink sink = { to_console, NULL, to_status };  /* the screen shows progress */
    dumpstick_open(&sink, stick);       /* trace.dump_to=: the boot stick too */
    console_lock();
    events = dump_encode(&sink, meta, rings, n);
    console_unlock();
    dumpstick_close();
    return events;
}

/* A dump needs a way out: a console sink that carries dumps (a UART that
 * answered) or the stick's dump area. Without one, writing it would only
 * say "done" about nothing: say so instead, on the console (the screen),
 * the status row and in `s`, and keep the rings as they are. */
static bool way_out(bool stick_allowed, const char *trigger)
{
    if (console_dump_sink_present() || dumpstick_would_take(stick_allowed) ||
        dumpnet_would_take())
        return true;
    nowhere++;
    kprintf("dump: nowhere to send it (%s): no UART answered, no network and no stick with a "
            "dump area %s; nothing was dumped, the rings are kept\n",
            trigger,
            stick_allowed ? "was found" : "can be written from this CPU");
    status_dump_nowhere(nowhere);
    return false;
}

uint32_t dump_nowhere_count(void) { return nowhere; }

uint64_t dump_run(const struct dump_request *rq)
{
    if (!way_out(stick_ok(rq), rq->trigger))
        return 0;
    uint32_t no = dump_id_next();
    if (!rq->quiet)
        trace(DUMP_BEGIN, no, 0);
    bool fault = rq->fault_cpu >= 0;
    bool ends_stream = fault && strcmp(rq->trigger, "nmi");
    struct snapshot f;
    stream_dump_started();                /* a stream pauses meanwhile */
    if (!snapshot_take(&f)) {
        stream_dump_ended(ends_stream);
        return 0;
    }
    static uint32_t apic[MAX_CPUS];   /* not on the stack: 4 KiB at 1024 CPUs */
    for (unsigned i = 0; i < f.n; i++)
        apic[i] = cpus[i].apic_id;
    struct dump_extra extras[DUMP_FACT_EXTRAS + 8];
    dump_fact_extras(extras);
    /* clang-format off */
    const struct dump_extra run[] = {
        { "snapshot", f.copied ? "copy" : "paused", 0 },
        { f.copied ? "pause_us" : NULL, NULL, tsc_to_us(f.pause_tsc) },
        { "trigger", rq->trigger, 0 },
        { fault ? "fault_cpu" : NULL, NULL, (uint64_t)rq->fault_cpu },
        { fault ? "fault_vector" : NULL, NULL, rq->fault_vector },
        { f.silent[0] ? "silent_cpus" : NULL, f.silent, 0 },
        { f.busy[0] ? "busy_cpus" : NULL, f.busy, 0 },
    };
    /* clang-format on */
    _Static_assert(sizeof run / sizeof run[0] <= 8, "extras[] holds them");
    memcpy(extras + DUMP_FACT_EXTRAS, run, sizeof run);
    unsigned nid;
    const struct dump_extra *id = machine_items(&nid);
    /* clang-format off */
    const struct dump_meta meta = {
        .dump_no = no, .tsc_hz = tsc_hz(), .apic_ids = apic, .extras = extras,
        .nextras = DUMP_FACT_EXTRAS + sizeof run / sizeof run[0], .nonce = boot_nonce(),
        .identity = id, .nidentity = nid,
    };
    /* clang-format on */
    enum dumpnet_cause cause = !fault                        ? DUMPNET_KEY
                               : !strcmp(rq->trigger, "nmi") ? DUMPNET_NMI
                                                             : DUMPNET_FAULT;
    uint64_t events = encode(&meta, f.rings, f.n, stick_ok(rq), cause);
    /* The rings are handed over with the end mark in them: a nested
     * claim keeps them this CPU's while the snapshot lets tracing go on
     * and DUMP_END is written, so a CPU waiting to dump (an NMI's) never
     * snapshots between the two. */
    snapshot_claim(0);
    snapshot_release(&f);
    if (!rq->quiet)
        trace(DUMP_END, no, events);
    snapshot_unclaim();
    stream_dump_ended(ends_stream);       /* a fault's ends the stream */
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
    if (!way_out(this_cpu_index() == 0, "previous"))
        return 0;
    if (!snapshot_claim(SNAPSHOT_CLAIM_US))
        return 0;
    uint32_t no = dump_id_next();
    trace(DUMP_BEGIN, no, 0);
    stream_dump_started();
    unsigned nid;
    const struct dump_extra *id = machine_items(&nid);   /* the same machine, booted again */
    /* clang-format off */
    const struct dump_meta meta = {
        .dump_no = no, .tsc_hz = hz, .apic_ids = apic_ids, .extras = extras, .nextras = nextras,
        .nonce = boot_nonce(), .previous_boot = true, .identity = id, .nidentity = nid,
    };
    /* clang-format on */
    uint64_t events = encode(&meta, rings, n, this_cpu_index() == 0, DUMPNET_KEY);
    trace(DUMP_END, no, events);        /* before the rings are handed over */
    snapshot_unclaim();
    stream_dump_ended(false);
    return events;
}
