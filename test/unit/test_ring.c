/* test_ring.c — the per-CPU ring, the boot log, the snapshot reader and
 * the trace point's mask logic (host build, ASan + UBSan).
 *
 * Interrupts are simulated with the RING_TEST_HOOKS hook: ring_write calls
 * it after reserving (stage 1) and after the payload (stage 2), and the
 * hook writes a nested event or takes a snapshot right there. A last test
 * runs a real writer thread against a concurrent reader. */
#define _POSIX_C_SOURCE 200809L
#define RING_TEST_HOOKS
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "check.h"
#include "trace/trace.h"

void (*ring_test_hook)(struct ring *r, int stage);

#define CAP 8

static struct trace_event slots_a[1 << 12] __attribute__((aligned(64)));
static struct trace_event slots_b[1 << 12] __attribute__((aligned(64)));
static struct ring ring_a, ring_b;

/* Everything a snapshot returned, plus its final counters. */
#define SNAP_KEEP 1024                  /* events a snap_result holds */

struct snap_result {
    unsigned n;
    struct trace_event ev[SNAP_KEEP];
    uint64_t seq[SNAP_KEEP];
    uint64_t gap_over[SNAP_KEEP], gap_excl[SNAP_KEEP];
    struct ring_snap s;
};

static void take_snapshot(struct ring *r, struct snap_result *out)
{
    out->n = 0;
    ring_snap_begin(&out->s, r);
    struct trace_event ev;
    uint64_t seq;
    while (ring_snap_next(&out->s, &ev, &seq)) {
        if (out->n < SNAP_KEEP) {
            out->ev[out->n] = ev;
            out->seq[out->n] = seq;
            out->gap_over[out->n] = out->s.gap_overwritten;
            out->gap_excl[out->n] = out->s.gap_excluded;
        }
        out->n++;
    }
}

/* The event every test writes for "n": all fields derived from n. */
static void write_n(struct ring *r, uint64_t n)
{
    ring_write(r, 1000 + n * 10, (uint16_t)(3 + n % 2), (uint8_t)n, n, ~n);
}

static bool event_is_n(const struct trace_event *e, uint64_t n, unsigned cpu)
{
    return e->tsc == 1000 + n * 10 && e->type == 3 + n % 2 &&
           e->flags == (uint8_t)n && e->a0 == n && e->a1 == ~n &&
           e->cpu == cpu && e->seq == (uint32_t)n;
}

static void fresh(struct ring *r, unsigned cap)
{
    CHECK_EQ(ring_init(r, slots_a, cap, 5), 0);
}

static void test_init(void)
{
    struct ring r;
    CHECK_EQ(ring_init(&r, slots_a, 6, 0), -1);           /* not a power of 2 */
    CHECK_EQ(ring_init(&r, slots_a, 4, 0), -1);           /* too small */
    CHECK_EQ(ring_init(&r, slots_a + 1, 8, 0), -1);       /* misaligned */
    CHECK_EQ(ring_init(&r, slots_a, 8, RING_MAX_CPU + 1), -1);   /* not a CPU */
    /* CPU 1023: the ring keeps the number, each event its low 8 bits,
     * and the snapshot checks those against the ring. */
    CHECK_EQ(ring_init(&r, slots_a, 8, 1023), 0);
    CHECK_EQ(r.cpu, 1023);
    ring_write(&r, 7, 3, 0, 1, 2);
    {
        struct ring_snap s;
        struct trace_event ev;
        uint64_t seq;
        ring_snap_begin(&s, &r);
        CHECK(ring_snap_next(&s, &ev, &seq));
        CHECK_EQ(ev.cpu, 0xFF);
        CHECK_EQ(ev.flags, 0);
        CHECK_EQ(ev.type, 3);
        slots_a[0].id_word ^= 1ull << TRACE_ID_CPU_SHIFT;   /* another CPU's byte */
        ring_snap_begin(&s, &r);
        CHECK(!ring_snap_next(&s, &ev, &seq));
        CHECK_EQ(s.excluded, 1);
    }
    CHECK_EQ(ring_init(&r, slots_a, 8, 255), 0);
    CHECK(ring_quiescent(&r));
    struct snap_result res;
    take_snapshot(&r, &res);
    CHECK_EQ(res.n, 0);
    CHECK_EQ(res.s.excluded + res.s.overwritten, 0);
}

static void test_basic_order(void)
{
    fresh(&ring_a, CAP);
    for (uint64_t n = 0; n < 5; n++)
        CHECK_EQ(ring_write(&ring_a, 1000 + n * 10, (uint16_t)(3 + n % 2),
                            (uint8_t)n, n, ~n),
                 n);
    struct snap_result res;
    take_snapshot(&ring_a, &res);
    CHECK_EQ(res.n, 5);
    for (unsigned i = 0; i < 5; i++) {
        CHECK(event_is_n(&res.ev[i], i, 5));
        CHECK_EQ(res.seq[i], i);
        CHECK_EQ(res.gap_over[i] + res.gap_excl[i], 0);
    }
    CHECK_EQ(res.s.sent, 5);
    CHECK_EQ(res.s.first, 0);
    CHECK_EQ(res.s.last, 4);
    CHECK_EQ(res.s.head - res.s.base, 5);
    CHECK(ring_quiescent(&ring_a));
    CHECK_EQ(ring_held(&ring_a), 5);
}

static void test_wrap(void)
{
    fresh(&ring_a, CAP);
    for (uint64_t n = 0; n < 20; n++)
        write_n(&ring_a, n);
    struct snap_result res;
    take_snapshot(&ring_a, &res);
    CHECK_EQ(res.n, CAP);
    CHECK_EQ(res.s.overwritten, 20 - CAP);
    CHECK_EQ(res.s.excluded, 0);
    CHECK_EQ(res.gap_over[0], 20 - CAP);     /* the first line's gap */
    CHECK_EQ(res.s.first, 12);
    CHECK_EQ(res.s.last, 19);
    for (unsigned i = 0; i < CAP; i++)
        CHECK(event_is_n(&res.ev[i], 12 + i, 5));
    CHECK_EQ(ring_held(&ring_a), CAP);
}

/* ---- nesting ----------------------------------------------------------- */

static int nest_stage;           /* stage at which the "interrupt" fires */
static bool nest_fired;
static bool nest_quiescent_inside;
static struct snap_result nest_snap;

static void nest_hook(struct ring *r, int stage)
{
    if (stage != nest_stage || nest_fired)
        return;
    nest_fired = true;
    nest_quiescent_inside = ring_quiescent(r);
    write_n(r, 1);                           /* the interrupt's event */
    take_snapshot(r, &nest_snap);            /* a reader looks right now */
}

static void test_nesting(int stage)
{
    fresh(&ring_a, CAP);
    nest_stage = stage;
    nest_fired = false;
    ring_test_hook = nest_hook;
    write_n(&ring_a, 0);                     /* outer: gets seq 0 */
    ring_test_hook = NULL;
    CHECK(nest_fired);
    CHECK(!nest_quiescent_inside);           /* outer write half done */

    /* Mid-write view: the inner event is complete; the outer one is not
     * there yet and is excluded, never shown torn or stale. */
    CHECK_EQ(nest_snap.n, 1);
    CHECK(event_is_n(&nest_snap.ev[0], 1, 5));
    CHECK_EQ(nest_snap.s.excluded, 1);
    CHECK_EQ(nest_snap.gap_excl[0], 1);

    /* After the outer write finished: both, in seq order, nothing lost. */
    CHECK(ring_quiescent(&ring_a));
    struct snap_result res;
    take_snapshot(&ring_a, &res);
    CHECK_EQ(res.n, 2);
    CHECK(event_is_n(&res.ev[0], 0, 5));
    CHECK(event_is_n(&res.ev[1], 1, 5));
    CHECK_EQ(res.s.excluded + res.s.overwritten, 0);
}

static unsigned quiesce_busy;

static void quiesce_hook(struct ring *r, int stage)
{
    if (stage == 1) {
        struct ring *rings[] = { r, NULL, &ring_b };
        quiesce_busy = trace_quiesce(rings, 3, 1000);
    }
}

static void test_quiesce(void)
{
    fresh(&ring_a, CAP);
    CHECK_EQ(ring_init(&ring_b, slots_b, CAP, 1), 0);
    ring_test_hook = quiesce_hook;
    write_n(&ring_a, 0);
    ring_test_hook = NULL;
    CHECK_EQ(quiesce_busy, 1);                /* timed out on ring_a only */
    struct ring *rings[] = { &ring_a, &ring_b };
    CHECK_EQ(trace_quiesce(rings, 2, 1000), 0);
}

/* ---- stale and lapped slots ----------------------------------------------- */

static void test_stale_slot(void)
{
    fresh(&ring_a, CAP);
    for (uint64_t n = 0; n < CAP + 3; n++)
        write_n(&ring_a, n);
    /* Slot of seq 6 still claims its previous lap (a write never finished). */
    slots_a[6 & (CAP - 1)].seq = (uint32_t)(6 - CAP);
    struct snap_result res;
    take_snapshot(&ring_a, &res);
    CHECK_EQ(res.n, CAP - 1);
    CHECK_EQ(res.s.excluded, 1);
    CHECK_EQ(res.s.overwritten, 3);
    for (unsigned i = 0; i < res.n; i++) {
        CHECK(res.seq[i] != 6);
        CHECK(event_is_n(&res.ev[i], res.seq[i], 5));
    }
    CHECK_EQ(res.gap_excl[3], 1);            /* seq 7 follows the hole */
    CHECK_EQ(res.seq[3], 7);
    CHECK_EQ(res.s.sent + res.s.overwritten + res.s.excluded,
             res.s.head - res.s.base);
}

static void test_lapped_during_read(void)
{
    fresh(&ring_a, CAP);
    for (uint64_t n = 0; n < CAP; n++)
        write_n(&ring_a, n);
    struct ring_snap s;
    ring_snap_begin(&s, &ring_a);
    struct trace_event ev;
    uint64_t seq;
    CHECK(ring_snap_next(&s, &ev, &seq));
    CHECK(event_is_n(&ev, 0, 5));
    for (uint64_t n = CAP; n < CAP + 5; n++)  /* a late writer laps 5 slots */
        write_n(&ring_a, n);
    unsigned more = 0;
    while (ring_snap_next(&s, &ev, &seq)) {
        CHECK(event_is_n(&ev, seq, 5));
        CHECK(seq >= 5);
        more++;
    }
    CHECK_EQ(more, 3);                        /* seqs 5, 6, 7 */
    CHECK_EQ(s.overwritten, 4);              /* seqs 1..4 reused under us */
    CHECK_EQ(s.sent + s.overwritten + s.excluded, CAP);
}

/* ---- clear, refused, boot log ------------------------------------------------ */

static void test_clear(void)
{
    fresh(&ring_a, CAP);
    for (uint64_t n = 0; n < 10; n++)
        write_n(&ring_a, n);
    ring_refuse(&ring_a);
    ring_write_pinned(&ring_a, 1, TRACE_EV_BOOT_PHASE, 0, 0, 0);   /* seq 10 */
    ring_clear(&ring_a);
    for (uint64_t n = 11; n < 14; n++)
        write_n(&ring_a, n);
    ring_refuse(&ring_a);
    struct snap_result res;
    take_snapshot(&ring_a, &res);
    CHECK_EQ(res.n, 3);
    CHECK_EQ(res.s.head - res.s.base, 3);
    CHECK_EQ(res.s.overwritten, 0);
    CHECK_EQ(res.s.refused, 1);
    CHECK_EQ(res.s.first, 11);
    CHECK_EQ(res.gap_over[0], 0);
    for (unsigned i = 0; i < 3; i++)
        CHECK(event_is_n(&res.ev[i], 11 + i, 5));
}

static void test_boot_log(void)
{
    fresh(&ring_a, CAP);
    for (uint64_t p = 0; p < 3; p++)
        ring_write_pinned(&ring_a, 50 + p, TRACE_EV_BOOT_PHASE, 0, p, 7);
    for (uint64_t n = 3; n < 33; n++)
        write_n(&ring_a, n);
    struct snap_result res;
    take_snapshot(&ring_a, &res);
    CHECK_EQ(res.n, 3 + CAP);
    for (unsigned p = 0; p < 3; p++) {
        CHECK_EQ(res.seq[p], p);
        CHECK_EQ(res.ev[p].type, TRACE_EV_BOOT_PHASE);
        CHECK_EQ(res.ev[p].a0, p);
        CHECK_EQ(res.ev[p].tsc, 50 + p);
        CHECK_EQ(res.ev[p].seq, p);
    }
    CHECK_EQ(res.seq[3], 33 - CAP);
    CHECK_EQ(res.gap_over[3], 33 - CAP - 3);
    CHECK_EQ(res.s.overwritten, 33 - CAP - 3);
    CHECK_EQ(res.s.pinned, 3);
    CHECK_EQ(ring_held(&ring_a), 3 + CAP);

    /* A pinned event still inside the window comes from the ring, once. */
    fresh(&ring_a, CAP);
    write_n(&ring_a, 0);
    ring_write_pinned(&ring_a, 60, TRACE_EV_AP_ONLINE, 0, 1, 2);
    take_snapshot(&ring_a, &res);
    CHECK_EQ(res.n, 2);
    CHECK_EQ(res.seq[1], 1);

    /* Boot-log overflow: the ring keeps the rest while it can. */
    CHECK_EQ(ring_init(&ring_b, slots_b, 128, 1), 0);
    for (uint64_t p = 0; p < 70; p++)
        ring_write_pinned(&ring_b, p, TRACE_EV_BOOT_PHASE, 0, p, 0);
    for (uint64_t n = 0; n < 200; n++)
        ring_write(&ring_b, 100 + n, 3, 0, n, 0);
    take_snapshot(&ring_b, &res);
    CHECK_EQ(res.s.pinned, 70);
    CHECK_EQ(res.n, RING_PINNED_SLOTS + 128);
    CHECK_EQ(res.s.overwritten, 270 - 128 - RING_PINNED_SLOTS);
}

/* ---- the trace point and its mask ------------------------------------- */

static uint64_t recorded(const struct ring *r)
{
    return r->head - r->base;
}

/* The results log (RESULT events): rescued in seq order once the ring has
 * wrapped over them, every other seq counted as overwritten; the newest
 * RING_RESULT_SLOTS survive; a clear forgets them. */
static void test_results_log(void)
{
    struct snap_result res;
    fresh(&ring_a, CAP);
    ring_write_pinned(&ring_a, 1, TRACE_EV_BOOT_PHASE, 0, 0, 0);          /* seq 0 */
    for (uint64_t n = 1; n < 5; n++)
        write_n(&ring_a, n);
    ring_write_result(&ring_a, 77, TRACE_EV_C2C_RTT, 0, 1, 900);           /* seq 5 */
    write_n(&ring_a, 6);
    ring_write_result(&ring_a, 78, TRACE_EV_C2C_RTT, 0, 2, 901);           /* seq 7 */
    for (uint64_t n = 8; n < 8 + 3 * CAP; n++)                             /* wrap thrice */
        write_n(&ring_a, n);
    take_snapshot(&ring_a, &res);
    CHECK_EQ(res.n, 3 + CAP);
    CHECK_EQ(res.seq[0], 0);                                               /* boot log */
    CHECK_EQ(res.seq[1], 5);
    CHECK_EQ(res.ev[1].type, TRACE_EV_C2C_RTT);
    CHECK_EQ(res.ev[1].a1, 900);
    CHECK_EQ(res.ev[1].tsc, 77);
    CHECK_EQ(res.gap_over[1], 4);
    CHECK_EQ(res.seq[2], 7);
    CHECK_EQ(res.gap_over[2], 1);
    CHECK_EQ(res.seq[3], 8 + 3 * CAP - CAP);
    CHECK_EQ(res.s.overwritten, 8 + 3 * CAP - CAP - 3);
    CHECK_EQ(res.s.sent + res.s.overwritten + res.s.excluded, res.s.head - res.s.base);
    CHECK_EQ(res.s.results, 2);
    CHECK_EQ(ring_held(&ring_a), 3 + CAP);

    /* More results than the log holds: the newest RING_RESULT_SLOTS stay. */
    fresh(&ring_a, CAP);
    for (uint64_t n = 0; n < RING_RESULT_SLOTS + 10; n++)
        ring_write_result(&ring_a, n, TRACE_EV_IPI_RTT, 0, n, 0);
    take_snapshot(&ring_a, &res);
    CHECK_EQ(res.s.results, RING_RESULT_SLOTS + 10);
    CHECK_EQ(res.n, RING_RESULT_SLOTS);                 /* the window's CAP among them */
    CHECK_EQ(res.seq[0], 10);
    CHECK_EQ(res.seq[res.n - 1], RING_RESULT_SLOTS + 9);
    CHECK_EQ(res.s.overwritten, 10);

    /* A clear forgets them (below base). */
    ring_clear(&ring_a);
    take_snapshot(&ring_a, &res);
    CHECK_EQ(res.n, 0);
}

static void test_mask(void)
{
    fresh(&ring_a, CAP);
    trace_host_ring = &ring_a;
    trace_set_mask(0);
    trace(IRQ_TIMER_BEGIN, 1, 2);
    CHECK_EQ(recorded(&ring_a), 0);
    trace_set_mask(TRACE_ENABLE | 1u << TRACE_CAT_IRQ);
    trace(IRQ_TIMER_BEGIN, 1, 2);
    trace(IPI_SEND, 1, 2);                    /* IPI category off */
    CHECK_EQ(recorded(&ring_a), 1);
    trace_set_categories(TRACE_CATS_ALL);
    trace(IPI_SEND, 1, 2);
    CHECK_EQ(recorded(&ring_a), 2);
    CHECK_EQ(trace_get_mask(), TRACE_ENABLE | TRACE_CATS_ALL);
    trace(BOOT_PHASE, TRACE_PHASE_READY, 0);  /* pinned: boot log too */
    CHECK_EQ(ring_a.pinned_next, 1);

    uint32_t saved = trace_pause();
    CHECK_EQ(saved, TRACE_ENABLE | TRACE_CATS_ALL);
    trace(IRQ_TIMER_END, 1, 0);
    CHECK_EQ(recorded(&ring_a), 3);
    CHECK_EQ(ring_a.refused, 1);              /* counted, not recorded */
    trace_resume(saved);
    CHECK_EQ(trace_get_mask(), saved);
    trace(IRQ_TIMER_END, 1, 0);
    CHECK_EQ(recorded(&ring_a), 4);

    trace_enable(false);
    uint32_t off = trace_pause();             /* pausing while off: no refusals */
    trace(IRQ_TIMER_END, 1, 0);
    CHECK_EQ(ring_a.refused, 1);
    trace_resume(off);
    trace_enable(true);
    trace_set_categories(1u << TRACE_CAT_BOOT);
    trace_pause();
    trace(IRQ_TIMER_END, 1, 0);               /* category off: not refused */
    CHECK_EQ(ring_a.refused, 1);
    trace_set_mask(TRACE_ENABLE | TRACE_CATS_ALL);

    trace_host_ring = NULL;                   /* a CPU without a ring */
    trace(IRQ_TIMER_END, 1, 0);
    CHECK_EQ(trace_no_ring_count(), 1);
    trace_set_mask(0);

    struct snap_result res;
    take_snapshot(&ring_a, &res);
    CHECK_EQ(res.n, 4);
    CHECK_EQ(res.ev[0].type, TRACE_EV_IRQ_TIMER_BEGIN);
    CHECK_EQ(res.ev[0].cpu, 5);
    CHECK_EQ(res.ev[0].a1, 2);
    CHECK(res.ev[1].tsc >= res.ev[0].tsc);
}

static void test_parse_mask(void)
{
    uint32_t cats = 0;
    const char *bad = NULL;
    size_t bad_len = 0;
    CHECK_EQ(trace_parse_mask("irq,IPI", 7, &cats, &bad, &bad_len), 0);
    CHECK_EQ(cats, 1u << TRACE_CAT_IRQ | 1u << TRACE_CAT_IPI);
    CHECK_EQ(trace_parse_mask("all", 3, &cats, &bad, &bad_len), 0);
    CHECK_EQ(cats, TRACE_CATS_ALL);
    CHECK_EQ(cats, 0xff);
    CHECK_EQ(trace_parse_mask("none", 99, &cats, &bad, &bad_len), 0);  /* stops at NUL */
    CHECK_EQ(cats, 0);
    CHECK_EQ(trace_parse_mask("boot,work trace.events=5", 9, &cats, &bad, &bad_len), 0);
    CHECK_EQ(cats, 1u << TRACE_CAT_BOOT | 1u << TRACE_CAT_WORK);
    const char *s = "irq,bogus,ipi";
    CHECK_EQ(trace_parse_mask(s, strlen(s), &cats, &bad, &bad_len), -1);
    CHECK(bad == s + 4);
    CHECK_EQ(bad_len, 5);
    CHECK_EQ(trace_parse_mask("irq,", 4, &cats, &bad, &bad_len), -1);  /* empty */
    CHECK_EQ(bad_len, 0);
    CHECK_EQ(trace_parse_mask("", 0, &cats, &bad, &bad_len), -1);
    CHECK_EQ(trace_parse_mask("ir", 2, &cats, &bad, &bad_len), -1);    /* no prefixes */

    CHECK(strcmp(trace_category_name(TRACE_CAT_IRQ), "IRQ") == 0);
    CHECK(trace_category_name(29) == NULL);
    CHECK(strcmp(trace_phase_name(TRACE_PHASE_TSC_CALIBRATED), "TSC_CALIBRATED") == 0);
    CHECK(trace_phase_name(trace_phase_limit) == NULL);
    const struct trace_event_info *t = trace_event_info(TRACE_EV_IRQ_TIMER_BEGIN);
    CHECK(t && strcmp(t->name, "IRQ_TIMER_BEGIN") == 0);
    CHECK(t && t->kind == TRACE_KIND_BEGIN && t->category == TRACE_CAT_IRQ);
    CHECK(t && strcmp(t->arg1, "lateness_tsc") == 0);
    CHECK(trace_event_info(0) == NULL);
    CHECK_EQ(TRACE_CATBIT_AP_ONLINE, 1u << TRACE_CAT_SMP);
    CHECK_EQ(TRACE_RETAIN_AP_ONLINE, TRACE_RET_PINNED);
    CHECK_EQ(TRACE_RETAIN_IPI_RECV, TRACE_RET_RING);
    CHECK_EQ(TRACE_RETAIN_C2C_RTT, TRACE_RET_RESULT);
}

/* ---- a real concurrent writer and reader ------------------------------- */

static volatile int stress_stop;

static void *stress_writer(void *arg)
{
    struct ring *r = arg;
    for (uint64_t n = 0; !stress_stop; n++)
        write_n(r, n);      /* single writer, no nesting: seq == n */
    return NULL;
}

static void test_concurrent_reader(void)
{
    CHECK_EQ(ring_init(&ring_b, slots_b, 64, 2), 0);
    pthread_t t;
    stress_stop = 0;
    CHECK_EQ(pthread_create(&t, NULL, stress_writer, &ring_b), 0);
    unsigned long snaps = 0, events = 0, bad = 0, lost = 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        struct ring_snap s;
        struct trace_event ev;
        uint64_t seq;
        ring_snap_begin(&s, &ring_b);
        while (ring_snap_next(&s, &ev, &seq)) {
            events++;
            if (!event_is_n(&ev, seq, 2))
                bad++;           /* a torn or stale copy got through */
        }
        lost += s.overwritten - (s.window - s.base) + s.excluded;
        if (s.sent + s.overwritten + s.excluded != s.head - s.base)
            bad++;
        snaps++;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) < 300000000L);
    stress_stop = 1;
    pthread_join(t, NULL);
    CHECK_EQ(bad, 0);
    CHECK(events > 0);
    printf("concurrent reader: %lu snapshots, %lu events checked, %lu skipped as lapped/in flight\n",
           snaps, events, lost);
}

/* ---- live snapshots: a stream's parts (docs/streaming.md) ----------------- */

/* One part from *m (NULL: the ring's base) into out, m moved on. */
static void take_part(struct ring *r, struct ring_mark *m, bool first, struct snap_result *out)
{
    out->n = 0;
    ring_snap_begin_from(&out->s, r, first ? NULL : m);
    struct trace_event ev;
    uint64_t seq;
    while (ring_snap_next(&out->s, &ev, &seq)) {
        if (out->n < SNAP_KEEP) {
            out->ev[out->n] = ev;
            out->seq[out->n] = seq;
            out->gap_over[out->n] = out->s.gap_overwritten;
            out->gap_excl[out->n] = out->s.gap_excluded;
        }
        out->n++;
    }
    ring_snap_mark(&out->s, m);
}

static bool part_adds_up(const struct ring_snap *s)
{
    return s->sent + s->overwritten + s->excluded == s->head - s->base;
}

/* The writer laps the consumer: exactly the seqs it reused are counted
 * overwritten, in the gap before the first event the ring still holds. */
static void test_part_lapped(void)
{
    fresh(&ring_a, CAP);
    struct ring_mark m;
    struct snap_result res;
    for (uint64_t n = 0; n < 5; n++)
        write_n(&ring_a, n);
    take_part(&ring_a, &m, true, &res);
    CHECK_EQ(res.n, 5);
    CHECK_EQ(m.seq, 5);
    CHECK(!m.held);
    for (uint64_t n = 5; n < 25; n++)         /* 20 more: the ring holds 17..24 */
        write_n(&ring_a, n);
    CHECK_EQ(ring_held_from(&ring_a, m.seq), CAP);
    take_part(&ring_a, &m, false, &res);
    CHECK_EQ(res.s.base, 5);
    CHECK_EQ(res.s.head, 25);
    CHECK_EQ(res.s.overwritten, 12);          /* seqs 5..16 */
    CHECK_EQ(res.gap_over[0], 12);
    CHECK_EQ(m.overwritten, 12);              /* and the mark says so */
    CHECK_EQ(m.excluded, 0);
    CHECK_EQ(res.s.first, 17);
    CHECK_EQ(res.s.last, 24);
    CHECK_EQ(res.n, CAP);
    for (unsigned i = 0; i < res.n; i++)
        CHECK(event_is_n(&res.ev[i], 17 + i, 5));
    CHECK(part_adds_up(&res.s));
    take_part(&ring_a, &m, false, &res);      /* nothing new: an empty part */
    CHECK_EQ(res.s.base, 25);
    CHECK_EQ(res.s.head, 25);
    CHECK_EQ(res.n + res.s.overwritten + res.s.excluded, 0);
}

/* The writer laps the consumer while it reads a part. */
static void test_part_lapped_during_read(void)
{
    fresh(&ring_a, CAP);
    struct ring_mark m = { .seq = 2 };
    for (uint64_t n = 0; n < CAP + 2; n++)
        write_n(&ring_a, n);
    struct ring_snap s;
    ring_snap_begin_from(&s, &ring_a, &m);    /* seqs 2..9 */
    struct trace_event ev;
    uint64_t seq;
    CHECK(ring_snap_next(&s, &ev, &seq));
    CHECK_EQ(seq, 2);
    for (uint64_t n = CAP + 2; n < CAP + 6; n++)   /* 4 more: seqs 3..5 reused */
        write_n(&ring_a, n);
    while (ring_snap_next(&s, &ev, &seq))
        CHECK(event_is_n(&ev, seq, 5) && seq >= 6 && seq < CAP + 2);
    CHECK_EQ(s.overwritten, 3);
    CHECK_EQ(s.sent, 5);                      /* 2, 6, 7, 8, 9 */
    CHECK(part_adds_up(&s));
    ring_snap_mark(&s, &m);
    CHECK_EQ(m.seq, CAP + 2);                 /* the next part: the 4 new ones */
}

static struct ring_mark flight_mark;
static struct snap_result flight_parts[2];
static unsigned flight_inner_parts;

/* The "interrupt": an event of its own, then 1 or 2 parts taken while the
 * outer write is still in flight. */
static void flight_hook(struct ring *r, int stage)
{
    if (stage != nest_stage || nest_fired)
        return;
    nest_fired = true;
    write_n(r, 1);
    for (unsigned i = 0; i < flight_inner_parts; i++)
        take_part(r, &flight_mark, false, &flight_parts[i]);
}

/* An in-flight slot near head: the part stops there and leaves it for the
 * next part, which takes it once written, or excludes it when it is
 * still in flight then (once: the part after goes on past it). */
static void test_part_in_flight(int stage, unsigned inner_parts)
{
    fresh(&ring_a, CAP);
    flight_mark = (struct ring_mark){ .seq = 0 };
    nest_stage = stage, nest_fired = false, flight_inner_parts = inner_parts;
    ring_test_hook = flight_hook;
    write_n(&ring_a, 0);                      /* outer: seq 0, the hook's event seq 1 */
    ring_test_hook = NULL;
    CHECK(nest_fired);
    const struct snap_result *p0 = &flight_parts[0];
    CHECK(p0->s.stopped);                     /* stopped at seq 0, taking nothing */
    CHECK_EQ(p0->s.head, 0);
    CHECK_EQ(p0->n + p0->s.excluded + p0->s.overwritten, 0);
    struct snap_result res;
    take_part(&ring_a, &flight_mark, false, &res);
    if (inner_parts == 1) {                   /* written since: taken, nothing lost */
        CHECK_EQ(res.s.base, 0);
        CHECK_EQ(res.n, 2);
        CHECK(event_is_n(&res.ev[0], 0, 5) && event_is_n(&res.ev[1], 1, 5));
        CHECK_EQ(res.s.excluded, 0);
    } else {                                  /* still in flight at the 2nd part: excluded */
        const struct snap_result *p1 = &flight_parts[1];
        CHECK(!p1->s.stopped);
        CHECK_EQ(p1->s.excluded, 1);
        CHECK_EQ(p1->n, 1);
        CHECK(event_is_n(&p1->ev[0], 1, 5));
        CHECK_EQ(p1->gap_excl[0], 1);
        CHECK_EQ(res.s.base, 2);              /* and never taken again */
        CHECK_EQ(res.n + res.s.excluded, 0);
    }
    CHECK(part_adds_up(&res.s));
}

/* An unfinished slot far behind head is no write in flight: excluded at
 * once, the part goes on. */
static void test_part_stale_far(void)
{
    CHECK_EQ(ring_init(&ring_a, slots_a, 256, 5), 0);
    for (uint64_t n = 0; n < 200; n++)
        write_n(&ring_a, n);
    slots_a[10].seq = (uint32_t)(10 - 256);
    slots_a[190].seq = (uint32_t)(190 - 256);  /* near head: in flight */
    struct ring_mark m = { .seq = 0 };
    struct snap_result res;
    take_part(&ring_a, &m, false, &res);
    CHECK_EQ(res.s.excluded, 1);
    CHECK(res.s.stopped);
    CHECK_EQ(res.s.head, 190);
    CHECK_EQ(res.n, 189);
    CHECK(m.held && m.seq == 190);
    take_part(&ring_a, &m, false, &res);       /* still unfinished: excluded now */
    CHECK_EQ(res.s.excluded, 1);
    CHECK_EQ(res.n, 9);
    CHECK(!m.held && m.seq == 200);
}

/* A part out of room gives back the event it just read. */
static void test_part_cut(void)
{
    fresh(&ring_a, CAP);
    for (uint64_t n = 0; n < 6; n++)
        write_n(&ring_a, n);
    struct ring_mark m = { .seq = 1 };
    struct ring_snap s;
    struct trace_event ev;
    uint64_t seq;
    ring_snap_begin_from(&s, &ring_a, &m);
    for (int i = 0; i < 3; i++)
        CHECK(ring_snap_next(&s, &ev, &seq));
    CHECK_EQ(seq, 3);
    ring_snap_cut(&s, seq);
    CHECK(!ring_snap_next(&s, &ev, &seq));
    CHECK_EQ(s.sent, 2);
    CHECK_EQ(s.last, 2);
    CHECK_EQ(s.head, 3);
    CHECK(part_adds_up(&s));
    ring_snap_mark(&s, &m);
    CHECK_EQ(m.seq, 3);
}

/* Refusals per part; a mark from before a clear starts at the clear. */
static void test_part_refused_clear(void)
{
    fresh(&ring_a, CAP);
    struct ring_mark m;
    struct snap_result res;
    ring_refuse(&ring_a);
    take_part(&ring_a, &m, true, &res);
    CHECK_EQ(res.s.refused, 1);
    ring_refuse(&ring_a);
    ring_refuse(&ring_a);
    write_n(&ring_a, 0);
    take_part(&ring_a, &m, false, &res);
    CHECK_EQ(res.s.refused, 2);
    CHECK_EQ(res.n, 1);
    write_n(&ring_a, 1);
    write_n(&ring_a, 2);
    ring_clear(&ring_a);                      /* base 3 */
    write_n(&ring_a, 3);
    take_part(&ring_a, &m, false, &res);
    CHECK_EQ(res.s.base, 3);
    CHECK_EQ(res.n, 1);
    CHECK(event_is_n(&res.ev[0], 3, 5));
}

/* Writes and parts in random turns: the parts tile the seq line, the
 * overwritten seqs are exactly those the writer reused before the part
 * began, every event is itself. */
static void test_parts_tile(void)
{
    CHECK_EQ(ring_init(&ring_a, slots_a, 64, 5), 0);
    uint64_t x = 12345, written = 0, covered = 0, head_before = 0;
    struct ring_mark m;
    struct snap_result res;
    bool first = true;
    for (int turn = 0; turn < 400; turn++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t burst = (x >> 33) % (turn % 7 == 0 ? 200 : 40);
        for (uint64_t i = 0; i < burst; i++)
            write_n(&ring_a, written++);
        take_part(&ring_a, &m, first, &res);
        CHECK_EQ(res.s.base, head_before);    /* part k+1 base == part k head */
        uint64_t lapped = written > 64 && written - 64 > res.s.base ? written - 64 - res.s.base : 0;
        CHECK_EQ(res.s.overwritten, lapped);
        CHECK_EQ(res.s.excluded, 0);
        CHECK(part_adds_up(&res.s));
        for (unsigned i = 0; i < res.n && i < SNAP_KEEP; i++)
            CHECK(event_is_n(&res.ev[i], res.seq[i], 5));
        covered += res.s.head - res.s.base;
        head_before = res.s.head;
        first = false;
    }
    CHECK_EQ(covered, written);
}

static struct ring_mark conc_mark;

/* A real writer thread against a consumer taking parts back to back. */
static void test_concurrent_parts(void)
{
    CHECK_EQ(ring_init(&ring_b, slots_b, 64, 2), 0);
    pthread_t t;
    stress_stop = 0;
    CHECK_EQ(pthread_create(&t, NULL, stress_writer, &ring_b), 0);
    unsigned long parts = 0, events = 0, bad = 0, lost = 0, held = 0;
    uint64_t covered = 0, base = 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool stop = false;
    for (bool first = true; !stop; first = false) {
        stop = stress_stop;
        struct ring_snap s;
        struct trace_event ev;
        uint64_t seq;
        ring_snap_begin_from(&s, &ring_b, first ? NULL : &conc_mark);
        while (ring_snap_next(&s, &ev, &seq)) {
            events++;
            bad += !event_is_n(&ev, seq, 2);      /* a torn or stale copy got through */
        }
        bad += !part_adds_up(&s) + (s.base != base);
        ring_snap_mark(&s, &conc_mark);
        lost += s.overwritten + s.excluded, held += s.stopped;
        covered += s.head - s.base, base = s.head;
        parts++;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!stress_stop && (now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) >= 300000000L) {
            stress_stop = 1;
            pthread_join(t, NULL);                /* one last part after the writer ended */
        }
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(covered, ring_b.head);               /* every seq in exactly one part */
    CHECK(events > 0);
    printf("concurrent parts: %lu parts, %lu events checked, %lu overwritten or excluded, "
           "%lu stopped at a write in flight\n",
           parts, events, lost, held);
}

static void report_cost(void)
{
    fresh(&ring_a, 1 << 12);
    trace_host_ring = &ring_a;
    trace_set_mask(TRACE_ENABLE | TRACE_CATS_ALL);
    enum { N = 1 << 20 };
    uint64_t t0 = trace_rdtsc();
    for (uint64_t i = 0; i < N; i++)
        trace(IRQ_TIMER_BEGIN, i, 0);
    uint64_t t1 = trace_rdtsc();
    trace_set_mask(TRACE_ENABLE);
    for (uint64_t i = 0; i < N; i++)
        trace(IRQ_TIMER_BEGIN, i, 0);
    uint64_t t2 = trace_rdtsc();
    trace_set_mask(0);
    trace_host_ring = NULL;
    printf("trace() cost in this build (sanitizers inflate it): %.1f TSC ticks enabled, %.1f disabled\n",
           (double)(t1 - t0) / N, (double)(t2 - t1) / N);
}

int main(void)
{
    test_init();
    test_basic_order();
    test_wrap();
    test_nesting(1);
    test_nesting(2);
    test_quiesce();
    test_stale_slot();
    test_lapped_during_read();
    test_clear();
    test_boot_log();
    test_results_log();
    test_mask();
    test_parse_mask();
    test_concurrent_reader();
    test_part_lapped();
    test_part_lapped_during_read();
    test_part_in_flight(1, 1);
    test_part_in_flight(2, 1);
    test_part_in_flight(1, 2);
    test_part_in_flight(2, 2);
    test_part_stale_far();
    test_part_cut();
    test_part_refused_clear();
    test_parts_tile();
    test_concurrent_parts();
    report_cost();
    return check_summary("test_ring");
}
