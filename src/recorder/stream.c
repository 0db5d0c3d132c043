/* stream.c — the stream's consumer: when to take a part, and the part
 * itself (stream.h). */
#include "recorder/stream.h"
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "cpus/smp.h"
#include "firmware/cmdline.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "mm/mem.h"
#include "net/net.h"
#include "recorder/dumpfacts.h"
#include "recorder/dumpid.h"
#include "recorder/machine.h"
#include "recorder/streamnet.h"
#include "time/tsc.h"
#include "time/uptime.h"
#include "trace/rings.h"

#define ROOM_BASE    (96u << 10)       /* bytes of lines a part may take, plus */
#define ROOM_PER_CPU 1024u             /* each CPU's counters line and some events */

enum state { OFF,
             RUNNING,
             ENDING };                 /* the final part is still to come or unconfirmed */

static enum state state;
static bool start_when_up;             /* trace.stream=net, not started yet */
static bool final_taken;
static uint32_t stream_no, part_no;
static unsigned ncpus;
static struct ring_mark *marks, *from;   /* [ncpus]: where the next part starts */
static struct ring **rings;
static uint32_t *apic;
static uint64_t last_part;             /* TSC */
static volatile uint32_t dumping;      /* dumps under way, on any CPU */
static volatile uint32_t dumps_done, dumps_seen;   /* dumps ended; as the poll saw them */
static volatile bool fault_ends;       /* a fault's dump ended the stream */
static struct {
    uint64_t events, overwritten, excluded;
} sums;                                /* of the current (or last) stream */

void stream_init(unsigned mode)
{
    ncpus = smp_slots();
    marks = mem_alloc(ncpus * sizeof *marks, 8);
    from = mem_alloc(ncpus * sizeof *from, 8);
    rings = mem_alloc(ncpus * sizeof *rings, 8);
    apic = mem_alloc(ncpus * sizeof *apic, 4);
    if (!marks || !from || !rings || !apic || !streamnet_init(ROOM_BASE + ncpus * ROOM_PER_CPU)) {
        kprintf("stream: no memory for a stream's state: no streams\n");
        ncpus = 0;
    }
    start_when_up = mode == CMDLINE_STREAM_NET;
}

bool stream_running(void) { return state != OFF; }

static void start(const char *why)
{
    if (!ncpus || !net_active()) {
        kprintf("stream: %s: nothing to stream to (%s)\n", why,
                ncpus ? "no network interface" : "no memory");
        return;
    }
    stream_no++, part_no = 0, final_taken = false, fault_ends = false;
    sums.events = sums.overwritten = sums.excluded = 0;
    for (unsigned i = 0; i < ncpus; i++) {
        struct ring *r = rings_of(i);
        marks[i] = (struct ring_mark){ .seq = r ? r->base : 0 };   /* for the half-ring rule */
        apic[i] = cpus[i].apic_id;
    }
    last_part = 0;
    streamnet_listen(true);
    state = RUNNING;
    kprintf("stream: stream %u started (%s): every CPU's events go to the host; n stops it\n",
            stream_no, why);
}

static void finish(void)
{
    struct streamnet_counts c;
    streamnet_counts(&c);
    streamnet_listen(false);
    state = OFF;
    kprintf("stream: stream %u ended%s: %u parts, %lu events, %lu overwritten before they were "
            "streamed, %lu excluded; %lu parts given up in all\n",
            stream_no, fault_ends ? " by a fault's dump" : "", part_no, sums.events,
            sums.overwritten, sums.excluded, c.given_up);
}

void stream_toggle(void)
{
    if (state == OFF)
        start("key n");
    else if (state == RUNNING) {
        state = ENDING;
        kprintf("stream: stream %u ending: its final part follows\n", stream_no);
    } else
        kprintf("stream: stream %u is ending already\n", stream_no);
}

/* Some CPU filled half its ring since the last part. */
static bool half_full(void)
{
    for (unsigned i = 0; i < ncpus; i++) {
        struct ring *r = cpus[i].online ? rings_of(i) : NULL;
        if (r && __atomic_load_n(&r->head, __ATOMIC_RELAXED) - marks[i].seq >= r->capacity / 2)
            return true;
    }
    return false;
}

static bool part_due(uint64_t now)
{
    if (final_taken || streamnet_unconfirmed() >= STREAMNET_SLOTS)
        return false;
    return state == ENDING || now - last_part >= tsc_from_us(STREAM_PART_US) || half_full();
}

/* Encode the next part into a free slot, behind the running writers. */
static void take_part(uint64_t now)
{
    bool final = state == ENDING, tables = part_no == 0;
    uint32_t no = dump_id_next();
    const struct dump_sink *sink = streamnet_fill(boot_nonce(), no);
    if (!sink)
        return;
    for (unsigned i = 0; i < ncpus; i++)
        rings[i] = cpus[i].online ? rings_of(i) : NULL;
    memcpy(from, marks, ncpus * sizeof *from);
    struct dump_extra extras[DUMP_FACT_EXTRAS];
    dump_fact_extras(extras);
    const struct dump_extra brief[] = {
        { "uptime_tsc", NULL, rdtsc() - uptime_boot_tsc() },
        { "capacity", NULL, rings_capacity() },
    };
    unsigned nid;
    const struct dump_extra *id = machine_items(&nid);
    /* clang-format off */
    const struct dump_meta meta = {
        .dump_no = no, .tsc_hz = tsc_hz(), .apic_ids = apic, .extras = tables ? extras : brief,
        .nextras = tables ? DUMP_FACT_EXTRAS : 2, .nonce = boot_nonce(),
        .identity = tables ? id : NULL, .nidentity = tables ? nid : 0, .stream = stream_no,
        .part = part_no, .final = final, .tables = tables, .from = tables ? NULL : from,
        .to = marks, .room = streamnet_room(),
    };
    /* clang-format on */
    sums.events += dump_encode(sink, &meta, rings, ncpus);
    for (unsigned i = 0; i < ncpus; i++)
        if (rings[i])
            sums.overwritten += marks[i].overwritten, sums.excluded += marks[i].excluded;
    streamnet_queue();
    part_no++, last_part = now;
    final_taken = final;
}

void stream_poll(void)
{
    if (start_when_up && net_up()) {
        start_when_up = false;
        if (state == OFF)
            start("trace.stream=net");
    }
    if (state == OFF)
        return;
    if (fault_ends && state == RUNNING)
        state = ENDING;
    /* A dump under way, or one that ended since the last poll (it ran on
     * this CPU, which polled nothing meanwhile): the host's quiet time
     * does not run. */
    uint32_t done = __atomic_load_n(&dumps_done, __ATOMIC_ACQUIRE);
    bool paused = __atomic_load_n(&dumping, __ATOMIC_ACQUIRE) != 0 || done != dumps_seen;
    dumps_seen = done;
    streamnet_poll(paused);
    uint64_t now = rdtsc();
    if (!paused && part_due(now))
        take_part(now);
    if (state == ENDING && final_taken && !streamnet_unconfirmed())
        finish();
}

void stream_dump_started(void) { __atomic_add_fetch(&dumping, 1, __ATOMIC_ACQ_REL); }

void stream_dump_ended(bool fault)
{
    if (fault && state == RUNNING)
        fault_ends = true;                /* the keys CPU takes the final part next */
    __atomic_add_fetch(&dumps_done, 1, __ATOMIC_ACQ_REL);
    __atomic_sub_fetch(&dumping, 1, __ATOMIC_ACQ_REL);
}

void stream_dump_abandoned(void)
{
    /* The snapshot claim is exclusive: a dump under way is this CPU's.
     * Without one (the fault came before it began), the fault alone
     * ends the stream. */
    if (__atomic_load_n(&dumping, __ATOMIC_ACQUIRE))
        stream_dump_ended(true);
    else if (state == RUNNING)
        fault_ends = true;
}

void stream_print_stats(void)
{
    struct streamnet_counts c;
    streamnet_counts(&c);
    if (state == OFF && !stream_no) {
        kprintf("stream: off (n starts one)\n");
        return;
    }
    kprintf("stream: %s, stream %u part %u, %lu events streamed, %lu overwritten before they "
            "were streamed, %lu excluded, %u parts unconfirmed, %lu bytes sent (%lu lines "
            "again), %lu parts confirmed, %lu given up\n",
            state == OFF ? "off" : state == RUNNING ? "on"
                                                    : "ending",
            stream_no, part_no,
            sums.events, sums.overwritten, sums.excluded, streamnet_unconfirmed(), c.bytes,
            c.resent, c.confirmed, c.given_up);
}
