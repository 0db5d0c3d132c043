/* test_decode.c — the host decoder core (decoder/decode.c, merge.c)
 * under the sanitizers: the real encoder's event lines decode back to the
 * exact events written into the ring, and mutated lines (bit flips,
 * cuts, CRC-valid garbage) are rejected or decoded without one read out
 * of bounds. The event-by-event comparison with the Python reference is
 * test/host/test_compiled_paths.py. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "decoder/decode.h"
#include "decoder/merge.h"
#include "lib/crc32.h"
#include "recorder/dumpid.h"
#include "recorder/encode.h"
#include "trace/trace.h"

#define CAP        256
#define WRITES     600               /* wraps the ring */
#define MAX_LINES  4096
#define LINE_CHARS 256
#define EV_CAP     4096
#define NONCE      0x0123456789ABCDEFull
#define DUMP_NO    3

static char lines[MAX_LINES][LINE_CHARS];
static size_t line_len[MAX_LINES];
static unsigned nlines;
static struct trace_event slots[CAP] __attribute__((aligned(64)));
static struct trace_event written[WRITES];
static struct trace_event out[EV_CAP];

static void keep_line(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    if (nlines < MAX_LINES && n < LINE_CHARS && n > 2 && s[0] == '%' && s[1] == 'E') {
        memcpy(lines[nlines], s, n - 1);            /* without the newline */
        line_len[nlines++] = n - 1;
    }
}

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* A mixed workload into one ring, then its dump's event lines. */
static void encode_ring(void)
{
    static struct ring ring;
    struct ring *rings[1] = { &ring };
    CHECK_EQ(ring_init(&ring, slots, CAP, 5), 0);
    uint64_t tsc = 1000;
    for (unsigned i = 0; i < WRITES; i++) {
        tsc += rnd() % 4 ? 1000 + rnd() % 7 : rnd();
        uint16_t type = (uint16_t)(rnd() % 3 ? 7 + i % 3 : rnd());
        uint64_t a0 = rnd() % 2 ? i : rnd(), a1 = rnd() % 5 ? 0 : rnd();
        ring_write(&ring, tsc, type, (uint8_t)(rnd() % 9 ? 0 : rnd()), a0, a1);
        written[i] = slots[i % CAP];
    }
    struct dump_sink sink = { keep_line, NULL, NULL };
    struct dump_meta meta = { .dump_no = DUMP_NO, .tsc_hz = 1000000, .nonce = NONCE };
    dump_encode(&sink, &meta, rings, 1);
}

static uint32_t seed;                       /* the dump's: every line's CRC starts there */

static void test_round_trip(void)
{
    unsigned at = WRITES - CAP;                     /* the ring kept the last CAP */
    CHECK(nlines > 2);
    for (unsigned l = 0; l < nlines; l++) {
        struct bt_run run;
        int32_t n = bt_decode_line((const uint8_t *)lines[l], line_len[l], seed, &run, out, EV_CAP);
        CHECK(n > 0);
        CHECK_EQ(run.cpu, 5);
        CHECK_EQ(run.start, at);
        for (int32_t i = 0; i < n && at < WRITES; i++, at++)
            CHECK(!memcmp(&out[i], &written[at], sizeof out[i]));
        struct bt_run wrong;
        CHECK_EQ(bt_decode_line((const uint8_t *)lines[l], line_len[l], seed ^ 1, &wrong, out,
                                EV_CAP),
                 BT_DAMAGED);   /* another dump's seed */
    }
    CHECK_EQ(at, WRITES);
}

static void test_mutations(void)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=*";
    unsigned decoded = 0;
    for (unsigned t = 0; t < 20000; t++) {
        char buf[LINE_CHARS];
        unsigned l = (unsigned)(rnd() % nlines);
        size_t n = line_len[l];
        memcpy(buf, lines[l], n);
        size_t at = 2 + rnd() % (n - 2);
        switch (rnd() % 3) {
        case 0:  buf[at] = b64[rnd() % (sizeof b64 - 1)]; break;
        case 1:  n = at; break;
        default: buf[at] ^= (char)(1 << rnd() % 8); break;
        }
        uint8_t *copy = malloc(n ? n : 1);          /* exact size: ASan sees overreads */
        memcpy(copy, buf, n);
        struct bt_run run;
        int32_t got = bt_decode_line(copy, n, seed, &run, out, EV_CAP);
        CHECK(got == BT_DAMAGED || got == BT_PUNT || got > 0);
        decoded += got > 0;
        free(copy);
    }
    CHECK(decoded < 2000);                          /* the CRC catches nearly all */
}

static void test_lines_batch(void)
{
    static uint8_t buf[MAX_LINES * LINE_CHARS];
    size_t len = 0;
    for (unsigned l = 0; l < nlines; l++) {
        memcpy(buf + len, lines[l], line_len[l]);
        len += line_len[l];
        buf[len++] = '\n';
    }
    struct bt_run runs[8];
    size_t used, total = 0, events = 0;
    for (size_t pos = 0; pos < len; pos += used) {
        size_t n = bt_decode_lines(buf + pos, len - pos, seed, runs, 8, out, 300, &used);
        CHECK(n > 0 && used > 0);
        for (size_t i = 0; i < n; i++)
            events += runs[i].status > 0 ? (size_t)runs[i].status : 0;
        total += n;
    }
    CHECK_EQ(total, nlines);
    CHECK_EQ(events, CAP);
}

static void test_merge_order(void)
{
    /* clang-format off */
    struct trace_event ev[6] = {
        { .tsc = 5, .cpu = 0, .seq = 0 }, { .tsc = 3, .cpu = 0, .seq = 1 },
        { .tsc = 9, .cpu = 0, .seq = 2 }, { .tsc = 3, .cpu = 1, .seq = 0 },
        { .tsc = 5, .cpu = 0, .seq = 0 }, { .tsc = 1, .cpu = 1, .seq = 2 },
    };
    /* clang-format on */
    uint32_t order[6], tmp[6];
    bt_merge_order(ev, 6, order, tmp);
    static const uint32_t want[6] = { 5, 1, 3, 0, 4, 2 };   /* ties keep input order */
    CHECK(!memcmp(order, want, sizeof want));
    struct trace_event sorted[6];
    bt_gather(ev, order, 6, sorted);
    CHECK(sorted[0].tsc == 1 && sorted[5].tsc == 9);
    bt_merge_order(ev, 0, order, tmp);                      /* nothing to sort */
}

int main(void)
{
    seed = dump_id_seed(NONCE, DUMP_NO);
    encode_ring();
    test_round_trip();
    test_mutations();
    test_lines_batch();
    test_merge_order();
    return check_summary("test_decode");
}
