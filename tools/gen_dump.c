/* gen_dump.c — host program: fills real rings (ring.c) with a synthetic
 * workload, encodes them with the real encoder (encode.c) and writes the
 * dump, wrapped in console noise, to stdout. Built by `make
 * build/tools/gen_dump`; host tests decode its output and compare with the
 * records it says the dump must hold.
 *
 * Usage: build/tools/gen_dump [key=value ...]
 *   cpus=N        CPUs (rings), 1..1024                         default 16
 *   apic=dense|sparse  APIC IDs: dense 0, 2, 4, ...; sparse spread over
 *                 the whole u32 range as x2APIC IDs are (CPU 0 has 0, odd
 *                 CPUs 256 + 3 * cpu, even ones 2^31 + 4097 * cpu, the
 *                 last CPU 2^32 - 1)                             default dense
 *   events=N      events written into each ring, boot events included
 *                 (more than cap wraps the ring; at most 2^26)    default 4096
 *   cap=N         ring capacity, a power of two >= 8              default 4096
 *   seed=N        random seed (same seed, same output)            default 1
 *   workload=W    timer: idle CPUs, LAPIC timer 100 Hz-1 kHz: IRQ_TIMER_BEGIN
 *                        /END pairs, a few IPIs, boot events first
 *                 mixed: every field random (unknown types, flags, full
 *                        64-bit args, TSC going backwards): losslessness
 *                 matrices: the results of an ipi, a c2c and a tsc run
 *                        (workloads.def 2, 3, 4; runs 1, 2, 3) as the
 *                        kernel records them, every pair of CPUs: two
 *                        sockets (the upper half of the CPUs slower to
 *                        reach), CPU 3 slow (an SMI) in the ipi matrix,
 *                        TSC offsets of a few ticks; events= is ignored
 *                                                                 default timer
 *   raw=PATH      write the records the dump must hold: per CPU in order
 *                 0..cpus-1, oldest to newest, 32 bytes each (event.h);
 *                 derived from what was written, not from the ring
 *   dump=N        dump number                                      default 1
 *   nonce=N       the boot's nonce (two boots: two nonces)  default 0x0123456789ABCDEF
 *   previous=0|1  a dump of the previous boot's rings (boot=previous) default 0
 *   tsc_hz=N      TSC rate written in the dump                     default 2400000000
 *   excluded=N    per CPU, N slots inside the ring made incomplete (as if
 *                 their write never finished): excluded, counted   default 0
 *   refused=N     per CPU, N events refused while paused           default 0
 *   clear_at=N    clear every ring after its first N events        default none
 *   noise=0|1     console text (GRUB, ANSI escapes, NULs, kernel lines)
 *                 before and after the dump                        default 1
 *   crlf=0|1      end lines with CR LF                             default 0
 * A stream's parts instead of one dump (docs/streaming.md):
 *   stream=S      write parts of stream S (1..), not a dump        default 0
 *   parts=K       how many parts, dump numbers dump=, dump+1, ... default 1
 *   part=K        the first part's number (its tables: part 0 only) default 0
 *   tables=0|1    force the tables into every part (1) or none (0)  default part 0
 *   final=0|1     the last part written says final=1               default 1
 *   from=N        the first part starts at seq N on every CPU (as if the
 *                 parts before it had taken the seqs below)  default the base
 *   chunks=A,B,..  events written into each ring before each part (one
 *                 number a part, so parts= follows; a chunk above cap laps
 *                 the consumer: overwritten before streamed)
 *                                       default events= split evenly over parts
 *   The events are those of the workload, written into the rings chunk by
 *   chunk between parts; raw= then holds what all the parts together must
 *   decode to (per CPU, oldest to newest). excluded= and clear_at= are for
 *   dumps only; refused=N refuses N before each part.
 * A summary (events, bytes, bytes/event) goes to stderr. Exit status 2 on
 * a bad argument. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "recorder/encode.h"
#include "trace/trace.h"

#define MAX_EVENTS   (1ULL << 26)     /* per CPU: keeps the shadow copy in memory */
#define GEN_MAX_CPUS 1024             /* the kernel's CPU ceiling (docs/dump-format.md) */

#define MAX_PARTS    4096

struct opts {
    unsigned cpus, cap, dump, excluded, refused, noise, crlf, previous, sparse;
    uint64_t events, seed, tsc_hz, clear_at, nonce;
    const char *workload, *raw;
    /* a stream's parts (stream != 0) */
    unsigned stream, parts, part, final;
    int tables;                 /* -1: part 0 only */
    uint64_t from, nchunks, chunks[MAX_PARTS];
};

/* What one CPU's generator wrote, to derive the expected dump. */
struct shadow {
    struct trace_event *ev;     /* every event written, by seq */
    unsigned char *pinned;      /* went to the boot log */
    unsigned char *dead;        /* made incomplete afterwards */
    uint64_t n, base;
};

static uint64_t rng_state;

static uint64_t rnd(void)      /* xorshift64* */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint64_t rnd_below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

static void put(struct ring *r, struct shadow *sh, uint64_t tsc, uint16_t type,
                uint8_t flags, uint64_t a0, uint64_t a1, int pinned)
{
    uint64_t seq = r->head;
    if (pinned)
        ring_write_pinned(r, tsc, type, flags, a0, a1);
    else
        ring_write(r, tsc, type, flags, a0, a1);
    struct trace_event *e = &sh->ev[seq];
    e->tsc = tsc;
    e->seq = (uint32_t)seq;
    e->type = type;
    e->cpu = (uint8_t)r->cpu;
    e->flags = flags;
    e->a0 = a0;
    e->a1 = a1;
    sh->pinned[seq] = (unsigned char)pinned;
    sh->n = seq + 1;
}

/* CPU cpu's APIC ID (apic=). */
static uint32_t apic_of(const struct opts *o, unsigned cpu)
{
    if (!o->sparse)
        return cpu * 2;
    if (cpu == 0)
        return 0;
    if (cpu == o->cpus - 1)
        return UINT32_MAX;
    return cpu % 2 ? 256 + 3 * cpu : 0x80000000u + 4097 * cpu;
}

static uint64_t boot_events(const struct opts *o, unsigned cpu, struct ring *r,
                            struct shadow *sh, uint64_t tsc)
{
    uint64_t n = 0;
    if (cpu == 0) {
        for (unsigned p = 0; p < trace_phase_limit && n < o->events; p++, n++) {
            uint64_t v = p == TRACE_PHASE_TSC_CALIBRATED ? o->tsc_hz : p == TRACE_PHASE_SMP_DONE ? o->cpus
                                                                                                 : 0;
            put(r, sh, tsc + p * 3000000, TRACE_EV_BOOT_PHASE, 0, p, v, 1);
        }
    } else {
        if (n++ < o->events)
            put(r, sh, tsc, TRACE_EV_AP_ONLINE, 0, cpu, apic_of(o, cpu), 1);
        if (n++ < o->events)
            put(r, sh, tsc + 40000, TRACE_EV_TSC_WARP, 0, 0, rnd_below(50), 1);
    }
    return n < o->events ? n : o->events;
}

/* Idle CPU with a LAPIC timer: BEGIN/END pairs, tick counter in a0,
 * lateness in a1, period 100 Hz..1 kHz with jitter, a rare IPI. */
static void workload_timer(const struct opts *o, unsigned cpu, struct ring *r,
                           struct shadow *sh)
{
    static const unsigned hz[] = { 1000, 250, 100 };
    uint64_t period = o->tsc_hz / hz[cpu % 3];
    uint64_t t0 = 1000000000ULL + cpu * 7000000ULL;
    uint64_t n = boot_events(o, cpu, r, sh, t0);
    uint64_t start = t0 + 40000000ULL, tick = 0;
    while (n < o->events) {
        uint64_t late = 200 + rnd_below(2000);
        uint64_t begin = start + tick * period + late;
        put(r, sh, begin, TRACE_EV_IRQ_TIMER_BEGIN, 0, tick, late, 0);
        if (++n < o->events && rnd_below(100) == 0) {
            put(r, sh, begin + 900, TRACE_EV_IPI_SEND, 0, (cpu + 1) % o->cpus, 0xf1, 0);
            n++;
        }
        if (n < o->events) {
            put(r, sh, begin + 1500 + rnd_below(600), TRACE_EV_IRQ_TIMER_END, 0, tick, 0, 0);
            n++;
        }
        tick++;
    }
}

/* The made-up machine of workload=matrices (ticks). */
static unsigned socket_of(const struct opts *o, unsigned cpu)
{
    return cpu >= (o->cpus + 1) / 2;
}

static uint64_t ipi_ticks(const struct opts *o, unsigned from, unsigned to)
{
    if (from == 3)
        return 12000000;                /* an SMI landed on every round trip */
    return 4000 + 1500 * (socket_of(o, from) != socket_of(o, to)) + (from * 7 + to) % 50;
}

static uint64_t c2c_ticks(const struct opts *o, unsigned a, unsigned b)
{
    return 2 * (150 + 700 * (socket_of(o, a) != socket_of(o, b)) + (a ^ b) % 30);
}

static int64_t tsc_offset(unsigned cpu)
{
    return (int64_t)(cpu % 7) * 11 - 30;
}

/* Workload results as the kernel's ipi, c2c and tsc runs record them:
 * CPU 0 brackets each run with WORKLOAD_BEGIN/END, every CPU records its
 * row (IPI_RTT to each other CPU; C2C_RTT once per pair, by the lower
 * CPU; TSC_DELTA against each writer). */
static void workload_matrices(const struct opts *o, unsigned cpu, struct ring *r,
                              struct shadow *sh)
{
    static const uint64_t ids[] = { 2, 3, 4 };          /* ipi, c2c, tsc */
    uint64_t t0 = 1000000000ULL + cpu * 7000ULL;
    boot_events(o, cpu, r, sh, t0);
    for (unsigned k = 0; k < 3; k++) {
        uint64_t start = 2000000000ULL + 100000000ULL * k, t = start + 1000;
        if (cpu == 0)
            put(r, sh, start, TRACE_EV_WORKLOAD_BEGIN, 0, ids[k], k + 1, 0);
        for (unsigned other = 0; other < o->cpus; other++, t += 10) {
            if (other == cpu)
                continue;
            if (k == 0)
                put(r, sh, t, TRACE_EV_IPI_RTT, 0, other, ipi_ticks(o, cpu, other), 0);
            else if (k == 1 && other > cpu)
                put(r, sh, t, TRACE_EV_C2C_RTT, 0, other, c2c_ticks(o, cpu, other), 0);
            else if (k == 2)    /* reader cpu, writer other: offset difference + transit */
                put(r, sh, t, TRACE_EV_TSC_DELTA, 0, other,
                    (uint64_t)(tsc_offset(cpu) - tsc_offset(other) + 300), 0);
        }
        if (cpu == 0)
            put(r, sh, start + 50000000ULL, TRACE_EV_WORKLOAD_END, 0, ids[k], k + 1, 0);
    }
}

static uint64_t wild(void)
{
    switch (rnd_below(4)) {
    case 0:  return rnd();
    case 1:  return rnd_below(300);
    case 2:  return ~rnd_below(5);
    default: return 1ULL << rnd_below(64);
    }
}

/* Every field random: known and unknown types (some sharing a predictor
 * slot), flags, 64-bit args, TSC jumping back and forth. */
static void workload_mixed(const struct opts *o, struct ring *r, struct shadow *sh)
{
    static const uint16_t types[] = { 3, 4, 5, 19, 35, 999, 65535, 1, 2 };
    uint64_t tsc = rnd();
    for (uint64_t n = 0; n < o->events; n++) {
        uint16_t t = types[rnd_below(sizeof types / sizeof types[0])];
        tsc += rnd_below(3) ? rnd_below(100000) : wild();
        uint8_t flags = rnd_below(4) ? 0 : (uint8_t)rnd();
        put(r, sh, tsc, t, flags, wild(), wild(), t <= 2);
    }
}

/* Slots made incomplete: their id word goes back one lap, as if the write
 * reserved them and never published. Only slots the ring still holds. */
static void make_excluded(const struct opts *o, struct ring *r, struct shadow *sh)
{
    uint64_t head = r->head, lo = head > r->capacity ? head - r->capacity : 0;
    if (lo < sh->base)
        lo = sh->base;
    for (unsigned i = 0; i < o->excluded && head > lo; i++) {
        uint64_t seq = lo + rnd_below(head - lo);
        r->slots[seq & r->mask].seq = (uint32_t)(seq - r->capacity);
        sh->dead[seq] = 1;
    }
}

/* The records the dump must hold, from the shadow alone: events since the
 * clear that are in the ring's last `cap`, or among the first
 * RING_PINNED_SLOTS pinned events ever written, minus incomplete slots. */
static void write_expected(FILE *f, const struct ring *r, const struct shadow *sh)
{
    uint64_t window = sh->n > r->capacity ? sh->n - r->capacity : 0;
    unsigned pinned_seen = 0;
    for (uint64_t s = 0; s < sh->n; s++) {
        bool boot_log = sh->pinned[s] && pinned_seen++ < RING_PINNED_SLOTS;
        if (s < sh->base || sh->dead[s])
            continue;
        if (s >= window || boot_log)
            fwrite(&sh->ev[s], sizeof sh->ev[s], 1, f);
    }
}

static bool opt_u64(const char *arg, const char *key, uint64_t *v)
{
    size_t n = strlen(key);
    if (strncmp(arg, key, n) || arg[n] != '=')
        return false;
    char *end;
    *v = strtoull(arg + n + 1, &end, 0);
    if (*end || end == arg + n + 1) {
        fprintf(stderr, "gen_dump: %s needs a number, got '%s'\n", key, arg + n + 1);
        exit(2);
    }
    return true;
}

/* chunks=A,B,...: events per part. */
static void parse_chunks(const char *p, struct opts *o)
{
    for (o->nchunks = 0;; p++) {
        char *end;
        uint64_t v = strtoull(p, &end, 0);
        if (*p < '0' || *p > '9' || (*end && *end != ',') || o->nchunks == MAX_PARTS) {
            fprintf(stderr, "gen_dump: chunks= takes up to %u numbers, commas between\n",
                    MAX_PARTS);
            exit(2);
        }
        o->chunks[o->nchunks++] = v;
        if (!*end)
            return;
        p = end;
    }
}

/* The stream's options; false when arg is none of them. */
static bool parse_stream(const char *a, struct opts *o)
{
    uint64_t v;
    if (opt_u64(a, "stream", &v))
        o->stream = (unsigned)v;
    else if (opt_u64(a, "parts", &v))
        o->parts = (unsigned)(v > MAX_PARTS ? MAX_PARTS + 1 : v);
    else if (opt_u64(a, "part", &v))
        o->part = (unsigned)v;
    else if (opt_u64(a, "final", &v))
        o->final = v != 0;
    else if (opt_u64(a, "tables", &v))
        o->tables = v != 0;
    else if (!opt_u64(a, "from", &o->from) && strncmp(a, "chunks=", 7))
        return false;
    if (!strncmp(a, "chunks=", 7))
        parse_chunks(a + 7, o);
    return true;
}

/* A stream's options that cannot go together. */
static void check_stream(struct opts *o)
{
    if (!o->stream)
        return;
    if (o->nchunks)
        o->parts = (unsigned)o->nchunks;
    if (!o->parts || o->parts > MAX_PARTS || o->excluded || o->clear_at || o->previous) {
        fprintf(stderr, "gen_dump: a stream takes 1..%u parts, and no excluded=, clear_at= or "
                        "previous=\n",
                MAX_PARTS);
        exit(2);
    }
}

static void parse(int argc, char **argv, struct opts *o)
{
    uint64_t cpus = 16, cap = 4096, dump = 1, excl = 0, refused = 0, noise = 1, crlf = 0;
    uint64_t previous = 0;
    o->events = 4096, o->seed = 1, o->tsc_hz = 2400000000ULL, o->clear_at = 0;
    o->nonce = 0x0123456789ABCDEFULL;
    o->workload = "timer", o->raw = NULL, o->sparse = 0;
    o->stream = o->part = o->nchunks = 0, o->parts = o->final = 1, o->tables = -1, o->from = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opt_u64(a, "cpus", &cpus) || opt_u64(a, "events", &o->events) ||
            opt_u64(a, "cap", &cap) || opt_u64(a, "seed", &o->seed) ||
            opt_u64(a, "dump", &dump) || opt_u64(a, "tsc_hz", &o->tsc_hz) ||
            opt_u64(a, "excluded", &excl) || opt_u64(a, "refused", &refused) ||
            opt_u64(a, "clear_at", &o->clear_at) || opt_u64(a, "noise", &noise) ||
            opt_u64(a, "crlf", &crlf) || opt_u64(a, "nonce", &o->nonce) ||
            opt_u64(a, "previous", &previous) || parse_stream(a, o))
            continue;
        if (!strncmp(a, "workload=", 9))
            o->workload = a + 9;
        else if (!strncmp(a, "raw=", 4))
            o->raw = a + 4;
        else if (!strcmp(a, "apic=dense") || !strcmp(a, "apic=sparse"))
            o->sparse = !strcmp(a, "apic=sparse");
        else {
            fprintf(stderr, "gen_dump: unknown argument '%s' (see the top of tools/gen_dump.c)\n", a);
            exit(2);
        }
    }
    if (cap < RING_MIN_CAPACITY || cap > RING_MAX_CAPACITY || (cap & (cap - 1))) {
        fprintf(stderr, "gen_dump: cap must be a power of two in [%u, %u]\n",
                RING_MIN_CAPACITY, RING_MAX_CAPACITY);
        exit(2);
    }
    if (o->events > MAX_EVENTS) {
        fprintf(stderr, "gen_dump: at most %llu events per CPU\n", (unsigned long long)MAX_EVENTS);
        exit(2);
    }
    if (cpus < 1 || cpus > GEN_MAX_CPUS || (strcmp(o->workload, "timer") && strcmp(o->workload, "mixed") && strcmp(o->workload, "matrices"))) {
        fprintf(stderr, "gen_dump: cpus must be 1..%u and workload timer, mixed or matrices\n",
                GEN_MAX_CPUS);
        exit(2);
    }
    o->cpus = (unsigned)cpus, o->cap = (unsigned)cap, o->dump = (unsigned)dump;
    o->excluded = (unsigned)excl, o->refused = (unsigned)refused;
    o->noise = (unsigned)noise, o->crlf = (unsigned)crlf, o->previous = previous != 0;
    check_stream(o);
    rng_state = o->seed * 0x9E3779B97F4A7C15ULL + 1;
}

struct out {
    bool crlf;
    uint64_t bytes, lines;
};

/* A stream's part i: the seqs written into each ring once its chunk is in
 * (chunks=, else events= split evenly). */
static uint64_t written_by(const struct opts *o, const struct shadow *sh, unsigned i)
{
    uint64_t n = 0;
    if (!o->nchunks)
        return sh->n * (i + 1) / o->parts;
    for (unsigned k = 0; k <= i; k++)
        n += o->chunks[k];
    return n < sh->n ? n : sh->n;
}

/* Replays the generated events [from, to) of one CPU into its ring. */
static void replay(struct ring *r, const struct shadow *sh, uint64_t from, uint64_t to)
{
    for (uint64_t s = from; s < to; s++) {
        const struct trace_event *e = &sh->ev[s];
        if (sh->pinned[s])
            ring_write_pinned(r, e->tsc, e->type, e->flags, e->a0, e->a1);
        else
            ring_write(r, e->tsc, e->type, e->flags, e->a0, e->a1);
    }
}

/* The records a stream's parts must hold for one CPU: per part [f, h),
 * the seqs the ring still held when the part was taken (the last `cap`),
 * and below them the pinned events the boot log kept (the first
 * RING_PINNED_SLOTS ever written); derived from the contract, not the
 * ring. */
static void write_expected_stream(FILE *f, const struct opts *o, const struct shadow *sh)
{
    uint64_t from = o->from;
    for (unsigned i = 0; i < o->parts; i++) {
        uint64_t head = written_by(o, sh, i);
        if (from > head)
            continue;                   /* from= beyond what was written: nothing yet */
        uint64_t window = head - from > o->cap ? head - o->cap : from;
        unsigned pinned_seen = 0;
        for (uint64_t s = 0; s < head; s++) {
            bool boot_log = sh->pinned[s] && pinned_seen++ < RING_PINNED_SLOTS;
            if (s >= from && (s >= window || boot_log))
                fwrite(&sh->ev[s], sizeof sh->ev[s], 1, f);
        }
        from = head;
    }
}

/* The stream's parts, rings written chunk by chunk between them; returns
 * the events all parts held. */
static uint64_t write_stream(const struct opts *o, struct ring **rings, const struct shadow *sh,
                             const uint32_t *apic, const struct dump_sink *sink)
{
    struct ring_mark *marks = calloc(o->cpus, sizeof *marks), *from = calloc(o->cpus, sizeof *from);
    uint64_t events = 0;
    for (unsigned c = 0; c < o->cpus; c++) {
        ring_init(rings[c], rings[c]->slots, o->cap, c);
        marks[c] = (struct ring_mark){ .seq = o->from };
    }
    for (unsigned i = 0; i < o->parts && marks && from; i++) {
        for (unsigned c = 0; c < o->cpus; c++) {
            replay(rings[c], &sh[c], rings[c]->head, written_by(o, &sh[c], i));
            for (unsigned k = 0; k < o->refused; k++)
                ring_refuse(rings[c]);
        }
        memcpy(from, marks, o->cpus * sizeof *from);
        unsigned part = o->part + i;
        /* clang-format off */
        struct dump_extra extras[] = {
            { "uptime_tsc", NULL, 123456789012ULL + part * 240000000ULL }, { "capacity", NULL, o->cap },
            { "invariant_tsc", NULL, 1 }, { "tsc_warp", NULL, 37 }, { "source", "gen_dump", 0 },
            { "workload", o->workload, 0 },
        };
        /* clang-format on */
        bool tables = o->tables < 0 ? part == 0 : o->tables;
        /* clang-format off */
        struct dump_meta meta = {
            .dump_no = o->dump + i, .tsc_hz = o->tsc_hz, .apic_ids = apic, .extras = extras,
            .nextras = tables ? 6 : 2, .nonce = o->nonce, .stream = o->stream, .part = part,
            .final = o->final && i + 1 == o->parts, .tables = tables,
            .from = i || o->from ? from : NULL, .to = marks,
        };
        /* clang-format on */
        events += dump_encode(sink, &meta, rings, o->cpus);
    }
    free(marks), free(from);
    return events;
}

static void sink_write(void *ctx, const char *s, size_t n)
{
    struct out *o = ctx;
    if (o->crlf && n && s[n - 1] == '\n') {
        fwrite(s, 1, n - 1, stdout);
        fputs("\r\n", stdout);
        o->bytes++;
    } else {
        fwrite(s, 1, n, stdout);
    }
    o->bytes += n;
    o->lines++;
}

static void noise_before(void)
{
    static const char text[] =
        "\x1b[2J\x1b[H\x1b[0;37;40m                GNU GRUB  version 2.06\r\n"
        "\x1b[1;1H  Booting `baretrace'\r\n\r\n"
        "baretrace: 16 CPUs online, TSC 2400 MHz invariant\r\n"
        "DUMP requested (hotkey d)\r\n";
    fwrite(text, 1, sizeof text - 1, stdout);
    fwrite("\0\0", 1, 2, stdout);
}

int main(int argc, char **argv)
{
    struct opts o;
    parse(argc, argv, &o);
    struct ring **rings = calloc(o.cpus, sizeof *rings);
    struct shadow *sh = calloc(o.cpus, sizeof *sh);
    uint32_t *apic = calloc(o.cpus, sizeof *apic);
    for (unsigned c = 0; c < o.cpus; c++) {
        rings[c] = aligned_alloc(RING_CACHE_LINE, sizeof(struct ring));
        struct trace_event *slots = aligned_alloc(RING_CACHE_LINE, (size_t)o.cap * 32);
        /* ring_init keeps the whole CPU number in the ring (which the
         * encoder numbers the lines by) and its low 8 bits in each
         * record's cpu byte (docs/dump-format.md). */
        if (!rings[c] || !slots || ring_init(rings[c], slots, o.cap, c)) {
            fprintf(stderr, "gen_dump: out of memory for %u rings of %u events\n", o.cpus, o.cap);
            return 2;
        }
        sh[c].ev = calloc(o.events + 1, sizeof *sh[c].ev);
        sh[c].pinned = calloc(o.events + 1, 1);
        sh[c].dead = calloc(o.events + 1, 1);
        if (!sh[c].ev || !sh[c].pinned || !sh[c].dead) {
            fprintf(stderr, "gen_dump: out of memory for %llu events per CPU\n",
                    (unsigned long long)o.events);
            return 2;
        }
        apic[c] = apic_of(&o, c);
    }
    for (unsigned c = 0; c < o.cpus; c++) {
        if (!strcmp(o.workload, "timer"))
            workload_timer(&o, c, rings[c], &sh[c]);
        else if (!strcmp(o.workload, "matrices"))
            workload_matrices(&o, c, rings[c], &sh[c]);
        else
            workload_mixed(&o, rings[c], &sh[c]);
    }
    /* clear_at replays nothing: it clears after the fact by moving base,
     * which is exactly what ring_clear does at that point in time. */
    for (unsigned c = 0; c < o.cpus; c++) {
        if (o.clear_at && o.clear_at <= sh[c].n) {
            uint64_t head = rings[c]->head;
            rings[c]->head = o.clear_at;
            ring_clear(rings[c]);
            rings[c]->head = head;
            sh[c].base = o.clear_at;
        }
        for (unsigned i = 0; i < o.refused; i++)
            ring_refuse(rings[c]);
        make_excluded(&o, rings[c], &sh[c]);
    }

    if (o.noise)
        noise_before();
    struct out out = { o.crlf != 0, 0, 0 };
    struct dump_sink sink = { sink_write, &out, NULL };
    /* clang-format off */
    struct dump_extra extras[] = {
        { "invariant_tsc", NULL, 1 }, { "tsc_warp", NULL, 37 },
        { "uptime_tsc", NULL, 123456789012ULL }, { "source", "gen_dump", 0 },
        { "workload", o.workload, 0 },
    };
    /* clang-format on */
    /* clang-format off */
    struct dump_meta meta = {
        .dump_no = o.dump, .tsc_hz = o.tsc_hz, .apic_ids = apic, .extras = extras, .nextras = 5,
        .nonce = o.nonce, .previous_boot = o.previous != 0,
    };
    /* clang-format on */
    uint64_t events = o.stream ? write_stream(&o, rings, sh, apic, &sink)
                               : dump_encode(&sink, &meta, rings, o.cpus);
    if (o.noise)
        fputs("\x1b[0mbaretrace: dump done, tracing resumed\r\n", stdout);
    fflush(stdout);

    if (o.raw) {
        FILE *f = fopen(o.raw, "wb");
        if (!f) {
            perror(o.raw);
            return 1;
        }
        for (unsigned c = 0; c < o.cpus; c++)
            if (o.stream)
                write_expected_stream(f, &o, &sh[c]);
            else
                write_expected(f, rings[c], &sh[c]);
        fclose(f);
    }
    fprintf(stderr, "gen_dump: %llu events, %llu bytes in %llu lines, %.2f bytes/event\n",
            (unsigned long long)events, (unsigned long long)out.bytes,
            (unsigned long long)out.lines, events ? (double)out.bytes / (double)events : 0.0);
    for (unsigned c = 0; c < o.cpus; c++) {
        free(rings[c]->slots);
        free(rings[c]);
        free(sh[c].ev);
        free(sh[c].pinned);
        free(sh[c].dead);
    }
    free(rings), free(sh), free(apic);
    return 0;
}
