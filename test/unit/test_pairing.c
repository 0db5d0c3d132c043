/* test_pairing.c — the one BEGIN/END nesting rule (recorder/pairing.h), with
 * the kernel's roles (events.def) and with a table as the host builds one
 * from a dump; the cases test/host/test_pairs.py gives btlib.pairs too. */
#include "check.h"
#include "recorder/pairing.h"
#include "recorder/schema.h"
#include "trace/trace.h"

enum { WB = TRACE_EV_WORKLOAD_BEGIN,
       WE = TRACE_EV_WORKLOAD_END,
       TB = TRACE_EV_IRQ_TIMER_BEGIN,
       TE = TRACE_EV_IRQ_TIMER_END,
       HK = TRACE_EV_HOTKEY };

#define MAX_EVS (PAIRING_DEPTH + 8)

struct ev {
    uint64_t tsc;
    uint16_t type;
    uint64_t a0;
};
/* What feeding gave: slices in the order they closed, and each event's
 * given-up mark. */
struct got {
    unsigned n;
    uint16_t begin[8];
    uint32_t at[8];              /* the BEGIN's index */
    uint64_t ticks[8];
    unsigned n_given_up;
    uint8_t given_up[MAX_EVS];
};

static void note_given_up(void *ctx, uint32_t index)
{
    struct got *g = ctx;
    g->n_given_up++;
    if (index < MAX_EVS)
        g->given_up[index]++;
}

static struct got feed_with(const struct pairing_role *roles, uint32_t nroles,
                            const struct ev *evs, unsigned n)
{
    static struct pairing p;
    static struct got g;
    g = (struct got){ 0 };
    pairing_init(&p, roles, nroles, note_given_up, &g);
    for (unsigned i = 0; i < n; i++) {
        struct trace_event e = { .tsc = evs[i].tsc, .type = evs[i].type, .a0 = evs[i].a0 };
        struct pairing_open b;
        if (pairing_feed(&p, &e, i, &b) && g.n < 8) {
            g.begin[g.n] = b.type;
            g.at[g.n] = b.index;
            g.ticks[g.n++] = e.tsc - b.tsc;
        }
    }
    pairing_reset(&p);                      /* gives up what is still open */
    return g;
}

static struct got feed(const struct ev *evs, unsigned n)
{
    return feed_with(trace_pair_roles, trace_pair_roles_count, evs, n);
}

#define FEED(...) ({ static const struct ev evs_[] = { __VA_ARGS__ }; \
                     feed(evs_, sizeof evs_ / sizeof evs_[0]); })

static void partners(void)
{
    CHECK_EQ(trace_pair_of(WB), WE);
    CHECK_EQ(trace_pair_of(WE), WB);
    CHECK_EQ(trace_pair_of(HK), 0);
    CHECK_EQ(trace_pair_roles[WB].kind, TRACE_KIND_BEGIN);
    CHECK_EQ(trace_pair_roles[WE].kind, TRACE_KIND_END);
    CHECK_EQ(trace_pair_roles[WB].key, trace_pair_roles[WE].key);
    CHECK(trace_pair_roles[TB].key != trace_pair_roles[WB].key);
    CHECK(HK >= trace_pair_roles_count || trace_pair_roles[HK].kind == TRACE_KIND_INSTANT);
}

/* CPU 0 of a workload run: the run's BEGIN, then its own part's (same a0). */
static void nested_begins_of_one_pair_both_count(void)
{
    struct got g = FEED({ 10, WB, 5 }, { 20, WB, 5 }, { 25, TB, 1 }, { 26, TE, 1 },
                        { 30, WE, 5 }, { 50, WE, 5 });
    CHECK_EQ(g.n, 3);
    CHECK_EQ(g.begin[0], TB);
    CHECK_EQ(g.ticks[0], 1);
    CHECK_EQ(g.begin[1], WB);
    CHECK_EQ(g.at[1], 1);                   /* the inner one closes first */
    CHECK_EQ(g.ticks[1], 10);
    CHECK_EQ(g.at[2], 0);
    CHECK_EQ(g.ticks[2], 40);
    CHECK_EQ(g.n_given_up, 0);
}

/* Pairs that cross with a steady TSC (issue 34): both are durations. The
 * old rule gave up the BEGIN above the closed one, then its END. */
static void crossing_pairs_are_both_durations(void)
{
    struct got g = FEED({ 10, WB, 5 }, { 20, TB, 1 }, { 30, WE, 5 }, { 40, TE, 1 });
    CHECK_EQ(g.n, 2);
    CHECK_EQ(g.begin[0], WB);
    CHECK_EQ(g.ticks[0], 20);
    CHECK_EQ(g.begin[1], TB);
    CHECK_EQ(g.at[1], 1);
    CHECK_EQ(g.ticks[1], 20);
    CHECK_EQ(g.n_given_up, 0);
}

/* A BEGIN whose END never came stays open above the closed one, and is
 * given up at the end. */
static void begin_without_its_end_is_given_up_at_the_end(void)
{
    struct got g = FEED({ 10, WB, 5 }, { 20, TB, 1 }, { 30, WE, 5 });
    CHECK_EQ(g.n, 1);
    CHECK_EQ(g.ticks[0], 20);
    CHECK_EQ(g.n_given_up, 1);
    CHECK_EQ(g.given_up[1], 1);
}

static void a0_must_match(void)
{
    struct got g = FEED({ 10, WB, 5 }, { 20, WE, 6 }, { 30, WE, 5 });
    CHECK_EQ(g.n, 1);
    CHECK_EQ(g.ticks[0], 20);
    CHECK_EQ(g.n_given_up, 1);
    CHECK_EQ(g.given_up[1], 1);
}

static void end_before_its_begin_gives_up_both(void)
{
    struct got g = FEED({ 10, WB, 5 }, { 5, WE, 5 }, { 20, WE, 5 });
    CHECK_EQ(g.n, 0);
    CHECK_EQ(g.n_given_up, 3);
    CHECK_EQ(g.given_up[0] + g.given_up[1] + g.given_up[2], 3);
}

static void open_begins_are_given_up_at_the_end(void)
{
    struct got g = FEED({ 10, WB, 5 }, { 11, HK, 0 }, { 12, TB, 1 });
    CHECK_EQ(g.n, 0);
    CHECK_EQ(g.n_given_up, 2);
    CHECK_EQ(g.given_up[0], 1);
    CHECK_EQ(g.given_up[1], 0);             /* an instant is never a half */
    CHECK_EQ(g.given_up[2], 1);
}

static void the_oldest_open_begin_is_given_up_past_the_depth(void)
{
    static struct ev evs[PAIRING_DEPTH + 2];
    evs[0] = (struct ev){ 1, WB, 9 };
    for (unsigned i = 1; i <= PAIRING_DEPTH; i++)
        evs[i] = (struct ev){ 1 + i, TB, i };
    evs[PAIRING_DEPTH + 1] = (struct ev){ 1000, WE, 9 };
    struct got g = feed(evs, PAIRING_DEPTH + 2);
    CHECK_EQ(g.n, 0);
    CHECK_EQ(g.given_up[0], 1);             /* pushed out, so the END finds nothing */
    CHECK_EQ(g.n_given_up, PAIRING_DEPTH + 2);
    evs[PAIRING_DEPTH + 1] = (struct ev){ 1000, TE, 1 };   /* the next-oldest stays */
    g = feed(evs, PAIRING_DEPTH + 2);
    CHECK_EQ(g.n, 1);
    CHECK_EQ(g.at[0], 1);
    CHECK_EQ(g.ticks[0], 1000 - 2);
    CHECK_EQ(g.n_given_up, PAIRING_DEPTH);  /* WB, and the 63 TBs still open at the end */
}

/* The host's table: partners are whatever has one key, names aside;
 * types past the table are instants. */
static void partners_come_from_the_callers_table(void)
{
    /* clang-format off */
    static const struct pairing_role roles[] = {
        [1] = { 7, TRACE_KIND_BEGIN }, [2] = { 7, TRACE_KIND_END },
        [3] = { 8, TRACE_KIND_BEGIN }, [4] = { 9, TRACE_KIND_END },
    };
    /* clang-format on */
    static const struct ev evs[] = { { 10, 1, 0 }, { 11, 3, 0 }, { 12, 4, 0 }, { 13, 9, 0 }, { 15, 2, 0 } };
    struct got g = feed_with(roles, 5, evs, 5);
    CHECK_EQ(g.n, 1);
    CHECK_EQ(g.at[0], 0);
    CHECK_EQ(g.ticks[0], 5);
    CHECK_EQ(g.n_given_up, 2);              /* 3 (open at the end), 4 (no key 9) */
    CHECK_EQ(g.given_up[1] + g.given_up[2], 2);
}

int main(void)
{
    partners();
    nested_begins_of_one_pair_both_count();
    crossing_pairs_are_both_durations();
    begin_without_its_end_is_given_up_at_the_end();
    a0_must_match();
    end_before_its_begin_gives_up_both();
    open_begins_are_given_up_at_the_end();
    the_oldest_open_begin_is_given_up_past_the_depth();
    partners_come_from_the_callers_table();
    return check_summary("test_pairing");
}
