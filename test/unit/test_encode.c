/* test_encode.c — the dump encoder: line structure, 7-bit cleanliness,
 * line length, line numbering, every line's CRC, the counters, and the
 * wire size of the default workload (16 idle CPUs, LAPIC timer), which
 * must stay at or below 12 bytes per event. Lossless decoding is checked
 * end to end by test/host/test_dumpfmt.py. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "lib/crc32.h"
#include "recorder/encode.h"
#include "trace/trace.h"

#define NCPUS               16
#define CAP                 4096
#define MAX_BYTES_PER_EVENT 12.0

static struct trace_event slots[NCPUS][CAP] __attribute__((aligned(64)));
static struct ring rings[NCPUS];

/* ---- a sink that keeps everything --------------------------------------- */

struct capture {
    char *buf;
    size_t len, cap;
    unsigned writes, partial;   /* calls, calls not ending in "\n" */
};

static void capture_write(void *ctx, const char *s, size_t n)
{
    struct capture *c = ctx;
    if (c->len + n + 1 > c->cap) {
        c->cap = (c->len + n + 1) * 2;
        c->buf = realloc(c->buf, c->cap);
    }
    memcpy(c->buf + c->len, s, n);
    c->len += n;
    c->buf[c->len] = 0;
    c->writes++;
    if (!n || s[n - 1] != '\n')
        c->partial++;
}

/* ---- helpers to read lines back ----------------------------------------- */

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Unpadded base64 to bytes; -1 on a bad character or length. */
static int unbase64(const char *s, size_t n, uint8_t *out)
{
    if (n % 4 == 1)
        return -1;
    uint32_t acc = 0;
    int bits = 0, len = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64val(s[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[len++] = (uint8_t)(acc >> bits);
        }
    }
    return len;
}

static uint64_t varint(const uint8_t *p, int *pos)
{
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        uint8_t b = p[(*pos)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80)
            return v;
    }
}

/* Value of " key=<digits>" in a line, or -1. */
static long long field(const char *line, size_t n, const char *key)
{
    char pat[32];
    size_t kl = strlen(key);
    pat[0] = ' ';
    memcpy(pat + 1, key, kl);
    pat[kl + 1] = '=';
    pat[kl + 2] = 0;
    for (size_t i = 0; i + kl + 2 <= n; i++)
        if (!memcmp(line + i, pat, kl + 2))
            return strtoll(line + i + kl + 2, NULL, 10);
    return -1;
}

/* Checks one text line "... *CCCCCCCC" whose CRC starts at `seed`. */
static bool text_crc_ok(const char *line, size_t n, uint32_t seed)
{
    if (n < 11 || line[n - 10] != ' ' || line[n - 9] != '*')
        return false;
    uint32_t want = (uint32_t)strtoul(line + n - 8, NULL, 16);
    return crc32_update(seed, line, n - 10) == want;
}

#define NONCE   0xFEDCBA9876543210ULL
#define DUMP_NO 7

/* The seed of every line but DUMP BEGIN, worked out independently of
 * encode.c: the CRC of the 12 id bytes, nonce then dump number, LE. */
static uint32_t expected_seed(uint64_t nonce, uint32_t dump_no)
{
    uint8_t id[12];
    for (int i = 0; i < 8; i++)
        id[i] = (uint8_t)(nonce >> (8 * i));
    for (int i = 0; i < 4; i++)
        id[8 + i] = (uint8_t)(dump_no >> (8 * i));
    return crc32_update(0, id, sizeof id);
}

struct summary {
    unsigned lines, event_lines, text_lines, bad_crc, bad_number, too_long, not_clean;
    unsigned plain_crc;         /* lines whose CRC holds without the seed */
    long long end_events, end_lines, sent_total, cpu_lines;
    bool begin_first, end_last;
};

static uint32_t walk_dump = DUMP_NO;   /* the dump number walk() checks the CRCs with */

/* Walks a captured dump and checks every line. */
static struct summary walk(const struct capture *c)
{
    struct summary s = { 0 };
    s.end_events = s.end_lines = -1;
    const char *p = c->buf, *end = c->buf + c->len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        unsigned no = s.lines++;
        if (n > DUMP_LINE_MAX)
            s.too_long++;
        for (size_t i = 0; i < n; i++)
            if (p[i] < 0x20 || p[i] > 0x7e)
                s.not_clean++;
        if (no == 0)
            s.begin_first = n > 11 && !memcmp(p, "DUMP BEGIN ", 11);
        if (n > 9 && !memcmp(p, "DUMP END ", 9)) {
            s.end_last = nl && nl + 1 == end;
            s.end_events = field(p, n, "events");
            s.end_lines = field(p, n, "lines");
        }
        uint32_t seed = no == 0 ? 0 : expected_seed(NONCE, walk_dump);
        if (n > 2 && !memcmp(p, "%E", 2)) {
            uint8_t bin[200];
            int len = unbase64(p + 2, n - 2, bin);
            uint32_t crc = len < 5 ? 0 : (uint32_t)bin[len - 4] | (uint32_t)bin[len - 3] << 8 | (uint32_t)bin[len - 2] << 16 | (uint32_t)bin[len - 1] << 24;
            s.event_lines++;
            if (len >= 5 && crc32_update(0, bin, (size_t)len - 4) == crc)
                s.plain_crc++;
            if (len < 5 || crc32_update(seed, bin, (size_t)len - 4) != crc) {
                s.bad_crc++;
            } else {
                int pos = 0;
                if (varint(bin, &pos) != no)
                    s.bad_number++;
            }
        } else {
            s.text_lines++;
            if (!text_crc_ok(p, n, seed))
                s.bad_crc++;
            if (no && text_crc_ok(p, n, 0))
                s.plain_crc++;
            if (p[0] == '%' && strtoul(p + 3, NULL, 10) != no)
                s.bad_number++;
            if (n > 2 && !memcmp(p, "%C", 2)) {
                s.cpu_lines++;
                s.sent_total += field(p, n, "sent");
            }
        }
        p += n + 1;
    }
    return s;
}

/* ---- workloads ---------------------------------------------------------- */

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? rng % n : rng;
}

/* The default workload: idle CPUs, LAPIC timer 100 Hz..1 kHz at 2.4 GHz
 * TSC, BEGIN/END pairs, tick counter in a0, lateness in a1; `events` per
 * CPU (more than CAP: the ring wraps, as a flight recorder does). */
static void fill_timer(unsigned events)
{
    static const uint64_t period[] = { 2400000, 9600000, 24000000 };
    for (unsigned c = 0; c < NCPUS; c++) {
        CHECK_EQ(ring_init(&rings[c], slots[c], CAP, c), 0);
        ring_write_pinned(&rings[c], 1000 + c, TRACE_EV_AP_ONLINE, 0, c, c);
        uint64_t t0 = 5000000000ULL + c * 12345;
        for (uint64_t tick = 0; rings[c].head < events; tick++) {
            uint64_t late = 150 + rnd(2500);
            uint64_t begin = t0 + tick * period[c % 3] + late;
            ring_write(&rings[c], begin, TRACE_EV_IRQ_TIMER_BEGIN, 0, tick, late);
            ring_write(&rings[c], begin + 1200 + rnd(900), TRACE_EV_IRQ_TIMER_END, 0, tick, 0);
        }
    }
}

static void fill_random(void)
{
    for (unsigned c = 0; c < NCPUS; c++) {
        CHECK_EQ(ring_init(&rings[c], slots[c], CAP, c), 0);
        for (unsigned i = 0; i < 500; i++)
            ring_write(&rings[c], rnd(0), (uint16_t)rnd(0), (uint8_t)rnd(0), rnd(0), rnd(0));
    }
}

/* clang-format off */
static struct ring *const ring_ptrs[NCPUS] = {
    &rings[0], &rings[1], &rings[2], &rings[3], &rings[4], &rings[5], &rings[6], &rings[7],
    &rings[8], &rings[9], &rings[10], &rings[11], &rings[12], &rings[13], &rings[14], &rings[15],
};
/* clang-format on */

static uint32_t apic_ids[NCPUS] = { 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30 };

/* What the sink's progress callback was told (struct dump_progress). */
static struct {
    unsigned calls, done_calls, rises, bad_steps;
    struct dump_progress last;
} prog;

static void on_progress(const struct dump_progress *p)
{
    if (prog.calls && (p->lines != prog.last.lines + 1 || p->events_sent < prog.last.events_sent ||
                       prog.last.done || p->events_total != prog.last.events_total))
        prog.bad_steps++;
    prog.rises += prog.calls && p->events_sent > prog.last.events_sent;
    prog.done_calls += p->done;
    prog.last = *p;
    prog.calls++;
}

static uint64_t encode_meta(struct capture *cap, const struct dump_meta *meta,
                            struct ring *const *r, unsigned n)
{
    struct dump_sink sink = { capture_write, cap, on_progress };
    memset(cap, 0, sizeof *cap);
    memset(&prog, 0, sizeof prog);
    return dump_encode(&sink, meta, r, n);
}

static uint64_t encode(struct capture *cap, struct ring *const *r, unsigned n,
                       const struct dump_extra *extras, unsigned nextras)
{
    struct dump_meta meta = { .dump_no = DUMP_NO, .tsc_hz = 2400000000ULL, .apic_ids = apic_ids, .extras = extras, .nextras = nextras, .nonce = NONCE };
    return encode_meta(cap, &meta, r, n);
}

/* A value longer than any line: c repeated, NUL-terminated. */
static void long_value(char *buf, size_t size, char c)
{
    memset(buf, c, size - 1);
    buf[size - 1] = 0;
}

static void check_structure(const struct capture *cap, uint64_t events)
{
    struct summary s = walk(cap);
    CHECK(s.begin_first);
    CHECK(s.end_last);
    CHECK_EQ(s.end_events, events);
    CHECK_EQ(s.end_lines, s.lines);
    CHECK_EQ(s.sent_total, events);
    CHECK_EQ(s.bad_crc, 0);
    CHECK_EQ(s.plain_crc, 0);               /* every line after BEGIN needs the id */
    CHECK_EQ(s.bad_number, 0);
    CHECK_EQ(s.too_long, 0);
    CHECK_EQ(s.not_clean, 0);
    CHECK_EQ(cap->partial, 0);              /* whole lines only */
    CHECK_EQ(cap->writes, s.lines);         /* streamed one line per write */
    /* Progress: told after every line, events only growing, done once at
     * DUMP END, the total what the rings held. */
    CHECK_EQ(prog.calls, s.lines);
    CHECK_EQ(prog.last.lines, s.lines);
    CHECK_EQ(prog.bad_steps, 0);
    CHECK_EQ(prog.done_calls, 1);
    CHECK(prog.last.done);
    CHECK_EQ(prog.last.dump_no, DUMP_NO);
    CHECK_EQ(prog.last.events_sent, events);
    CHECK_EQ(prog.last.events_total, events);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_crc32(void)
{
    CHECK_EQ(crc32_update(0, "123456789", 9), 0xCBF43926u);
    CHECK_EQ(crc32_update(crc32_update(0, "1234", 4), "56789", 5), 0xCBF43926u);
    CHECK_EQ(crc32_update(0, "", 0), 0);
}

static void test_default_workload_size(void)
{
    fill_timer(6000);
    struct capture cap;
    uint64_t events = encode(&cap, ring_ptrs, NCPUS, NULL, 0);
    CHECK_EQ(events, NCPUS * (CAP + 1));        /* the ring + the pinned AP_ONLINE */
    check_structure(&cap, events);
    /* Each line as it travels on a terminal: with "\r\n". */
    struct summary s = walk(&cap);
    double per_event = (double)(cap.len + s.lines) / (double)events;
    printf("default workload: %llu events, %zu bytes (+%u CRs), %.2f bytes/event\n",
           (unsigned long long)events, cap.len, s.lines, per_event);
    CHECK(per_event <= MAX_BYTES_PER_EVENT);
    CHECK(prog.rises > 4 * NCPUS);              /* it moves by lines, not a CPU at a time */
    CHECK(strstr(cap.buf, "%C ") != NULL);
    CHECK(strstr(cap.buf, " cpu=3 apic=6 cap=4096 base=0 head=6001 recorded=6001 "
                          "overwritten=1904 excluded=0 refused=0 sent=4097 first=0 "
                          "last=6000 pinned=1 results=0 *") != NULL);
    free(cap.buf);
}

static void test_random_fields(void)
{
    fill_random();                      /* big varints: longest event encodings */
    struct capture cap;
    uint64_t events = encode(&cap, ring_ptrs, NCPUS, NULL, 0);
    CHECK_EQ(events, NCPUS * 500);
    check_structure(&cap, events);
    free(cap.buf);
}

static void test_empty_and_missing_rings(void)
{
    CHECK_EQ(ring_init(&rings[0], slots[0], CAP, 0), 0);
    struct ring *r[3] = { &rings[0], NULL, NULL };
    struct capture cap;
    CHECK_EQ(encode(&cap, r, 3, NULL, 0), 0);
    check_structure(&cap, 0);
    CHECK(strstr(cap.buf, "DUMP BEGIN v=2 dump=7 nonce=FEDCBA9876543210 cpus=3 events=0 *") == cap.buf);
    CHECK(strstr(cap.buf, "DUMP END dump=7 nonce=FEDCBA9876543210 events=0 lines=") != NULL);
    CHECK(strstr(cap.buf, "boot=") == NULL);
    CHECK(strstr(cap.buf, " cpu=2 apic=4 cap=0 ") != NULL);
    free(cap.buf);
}

static void test_extras_cleaned_and_wrapped(void)
{
    CHECK_EQ(ring_init(&rings[0], slots[0], CAP, 0), 0);
    char longval[400];
    long_value(longval, sizeof longval, 'x');
    struct dump_extra x[] = {
        { "bad key", "tab\there \x01", 0 },
        { "uptime_tsc", NULL, 18446744073709551615ULL },
        { "cpu_model", "Intel(R)_Xeon", 0 },
        { "long", longval, 0 },
        { NULL, "skipped", 0 },
    };
    struct ring *r[1] = { &rings[0] };
    struct capture cap;
    encode(&cap, r, 1, x, 5);
    check_structure(&cap, 0);
    CHECK(strstr(cap.buf, " bad_key=tab_here__ ") != NULL);
    CHECK(strstr(cap.buf, " uptime_tsc=18446744073709551615") != NULL);
    CHECK(strstr(cap.buf, "skipped") == NULL);
    CHECK(strstr(cap.buf, "%M 2 long=xxx") != NULL);   /* wrapped onto its own line */
    free(cap.buf);
}

/* An `l` dump of the previous boot's rings says so in its header. */
static void test_previous_boot(void)
{
    CHECK_EQ(ring_init(&rings[0], slots[0], CAP, 0), 0);
    struct ring *r[1] = { &rings[0] };
    struct capture cap;
    struct dump_meta meta = { .dump_no = DUMP_NO, .nonce = NONCE, .previous_boot = true };
    encode_meta(&cap, &meta, r, 1);
    check_structure(&cap, 0);
    CHECK(strstr(cap.buf, " events=0 boot=previous *") != NULL);
    CHECK(strstr(cap.buf, "%I ") == NULL);              /* no identity given: no %I */
    free(cap.buf);
}

/* What the machine is: one %I line per item, right after %M, the value in
 * desc= (spaces kept, cut to the line), a number in decimal. */
static void test_identity(void)
{
    CHECK_EQ(ring_init(&rings[0], slots[0], CAP, 0), 0);
    char longval[400];
    long_value(longval, sizeof longval, 'y');
    const struct dump_extra id[] = {
        { "system.product", "Standard PC (i440FX + PIIX, 1996)", 0 },
        { "memory_mb", NULL, 8192 },
        { NULL, "skipped", 0 },
        { "board.version", "", 0 },
        { "cpu.brand", longval, 0 },
    };
    struct ring *r[1] = { &rings[0] };
    struct capture cap;
    struct dump_meta meta = { .dump_no = DUMP_NO, .tsc_hz = 1, .nonce = NONCE, .identity = id, .nidentity = 5 };
    encode_meta(&cap, &meta, r, 1);
    check_structure(&cap, 0);
    CHECK(strstr(cap.buf, "\n%I 2 key=system.product desc=Standard PC (i440FX + PIIX, 1996) *") != NULL);
    CHECK(strstr(cap.buf, "\n%I 3 key=memory_mb desc=8192 *") != NULL);
    CHECK(strstr(cap.buf, "\n%I 4 key=board.version desc= *") != NULL);
    CHECK(strstr(cap.buf, "\n%I 5 key=cpu.brand *") != NULL);   /* too long: moved on */
    CHECK(strstr(cap.buf, "\n%I 6 key=cpu.brand desc=yyy") != NULL);   /* and cut */
    CHECK(strstr(cap.buf, "skipped") == NULL);
    CHECK(strstr(cap.buf, "\n%I 7 ") == NULL);
    free(cap.buf);
}

/* ---- a stream's parts (docs/streaming.md) ------------------------------- */

#define STREAM_CPUS 4
#define STREAM_ROOM 12000           /* bytes a short part may take: several parts */

/* Counts of each tag's lines in a capture. */
static unsigned tag_lines(const struct capture *c, const char *tag)
{
    unsigned n = 0;
    for (const char *p = c->buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += !memcmp(p, tag, 2);
    return n;
}

/* A %C line's field for `cpu`, summed over its continuation lines. */
static long long cpu_field(const struct capture *c, unsigned cpu, const char *key)
{
    for (const char *p = c->buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (!memcmp(p, "%C", 2) && field(p, n, "cpu") == cpu && field(p, n, key) >= 0)
            return field(p, n, key);
    }
    return -1;
}

/* One part: encoded from marks, marks moved on; returns its events. */
static uint64_t stream_part(struct capture *cap, uint32_t part, bool final, struct ring_mark *marks,
                            size_t room)
{
    const struct dump_extra extras[] = { { "uptime_tsc", NULL, 99 }, { "capacity", NULL, CAP } };
    struct ring_mark from[STREAM_CPUS];
    memcpy(from, marks, sizeof from);
    walk_dump = DUMP_NO + part;
    struct dump_meta meta = { .dump_no = DUMP_NO + part, .tsc_hz = 2400000000ULL, .apic_ids = apic_ids, .extras = extras, .nextras = 2, .nonce = NONCE, .stream = 3, .part = part, .final = final, .tables = part == 0, .from = part ? from : NULL, .to = marks, .room = room };
    uint64_t events = encode_meta(cap, &meta, ring_ptrs, STREAM_CPUS);
    printf("part %u: %zu bytes, %llu events\n", part, cap->len, (unsigned long long)events);
    struct summary s = walk(cap);
    CHECK_EQ(s.bad_crc + s.bad_number + s.too_long + s.not_clean, 0);
    CHECK(s.begin_first && s.end_last);
    CHECK_EQ(s.sent_total, events);
    CHECK(!room || cap->len <= room);
    char begin[96];
    snprintf(begin, sizeof begin, " events=%llu stream=3 part=%u%s *", (unsigned long long)prog.last.events_total,
             part, final ? " final=1" : "");
    CHECK(strstr(cap->buf, begin) != NULL);
    bool tables = part == 0;
    CHECK_EQ(tag_lines(cap, "%T") > 0, tables);
    CHECK_EQ(tag_lines(cap, "%K") + tag_lines(cap, "%P") + tag_lines(cap, "%W") > 0, tables);
    CHECK(strstr(cap->buf, "\n%M 1 tsc_hz=2400000000 stream=3 ") != NULL);
    CHECK_EQ(strstr(cap->buf, "pinned_slots=") != NULL, tables);
    CHECK(strstr(cap->buf, " uptime_tsc=99 capacity=4096 ") != NULL);
    return events;
}

/* A stream of parts out of rings that are written between parts, each
 * part bounded by room: the parts tile every CPU's seqs, and every event
 * goes out exactly once. */
static void test_stream_parts(void)
{
    fill_timer(3000);
    struct ring_mark marks[STREAM_CPUS];
    uint64_t base[STREAM_CPUS] = { 0 }, total = 0;
    struct capture cap;
    uint32_t part = 0;
    for (bool more = true; more; part++) {
        if (part == 3)                      /* the rings go on meanwhile: 600 more each */
            for (unsigned c = 0; c < STREAM_CPUS; c++)
                for (unsigned i = 0; i < 600; i++)
                    ring_write(&rings[c], 9000000000ULL + i, TRACE_EV_IPI_RECV, 0, i, 0);
        total += stream_part(&cap, part, false, marks, part == 0 ? 3 * STREAM_ROOM : STREAM_ROOM);
        more = false;
        for (unsigned c = 0; c < STREAM_CPUS; c++) {
            CHECK_EQ(cpu_field(&cap, c, "base"), base[c]);       /* part k+1 base == part k head */
            CHECK_EQ(cpu_field(&cap, c, "head"), marks[c].seq);
            CHECK_EQ(cpu_field(&cap, c, "overwritten") + cpu_field(&cap, c, "excluded"), 0);
            base[c] = marks[c].seq;
            more |= marks[c].seq < rings[c].head;
        }
        free(cap.buf);
        CHECK(part < 100);
        if (part >= 100)
            break;
    }
    CHECK(part > 3);                        /* room made it take several */
    total += stream_part(&cap, part, true, marks, STREAM_ROOM);   /* the final, empty part */
    CHECK_EQ(prog.last.events_sent, 0);
    free(cap.buf);
    uint64_t written = 0;
    for (unsigned c = 0; c < STREAM_CPUS; c++)
        written += rings[c].head;
    CHECK_EQ(total, written);
}

/* An ordinary dump is unchanged by the stream fields it leaves 0. */
static void test_dump_not_a_part(void)
{
    fill_timer(100);
    struct capture cap;
    encode(&cap, ring_ptrs, 2, NULL, 0);
    CHECK(strstr(cap.buf, " stream=") == NULL);
    CHECK(tag_lines(&cap, "%T") > 0);
    free(cap.buf);
}

int main(void)
{
    test_crc32();
    test_default_workload_size();
    test_random_fields();
    test_empty_and_missing_rings();
    test_extras_cleaned_and_wrapped();
    test_previous_boot();
    test_identity();
    test_stream_parts();
    test_dump_not_a_part();
    return check_summary("test_encode");
}
