/* test_pairing.c — the kernel's BEGIN/END nesting rule (trace/pairing.h),
 * on the cases test/host/test_pairs.py gives the host's pairs.py. */
#include "check.h"
#include "trace/pairing.h"
#include "trace/schema.h"
#include "trace/trace.h"

enum { WB = TRACE_EV_WORKLOAD_BEGIN, WE = TRACE_EV_WORKLOAD_END,
       TB = TRACE_EV_IRQ_TIMER_BEGIN, TE = TRACE_EV_IRQ_TIMER_END };

struct ev { uint64_t tsc; uint16_t type; uint64_t a0; };
struct got { unsigned n; uint16_t begin[8]; uint64_t ticks[8]; };

static struct got feed(const struct ev *evs, unsigned n)
{
    static struct pairing p;
    struct got g = { 0 };
    pairing_reset(&p);
    for (unsigned i = 0; i < n; i++) {
        struct trace_event e = { .tsc = evs[i].tsc, .type = evs[i].type, .a0 = evs[i].a0 };
        uint16_t begin;
        uint64_t ticks;
        if (pairing_feed(&p, &e, &begin, &ticks) && g.n < 8) {
            g.begin[g.n] = begin;
            g.ticks[g.n++] = ticks;
        }
    }
    return g;
}

#define FEED(...) ({ static const struct ev evs_[] = { __VA_ARGS__ }; \
                     feed(evs_, sizeof evs_ / sizeof evs_[0]); })

static void partners(void)
{
    CHECK_EQ(trace_pair_of(WB), WE);
    CHECK_EQ(trace_pair_of(WE), WB);
    CHECK_EQ(trace_pair_of(TRACE_EV_HOTKEY), 0);
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
    CHECK_EQ(g.ticks[1], 10);
    CHECK_EQ(g.ticks[2], 40);
}

static void an_end_gives_up_the_begins_above_its_own(void)
{
    struct got g = FEED({ 10, WB, 5 }, { 20, TB, 1 }, { 30, WE, 5 }, { 40, TE, 1 });
    CHECK_EQ(g.n, 1);
    CHECK_EQ(g.begin[0], WB);
    CHECK_EQ(g.ticks[0], 20);
}

static void a0_must_match(void)
{
    struct got g = FEED({ 10, WB, 5 }, { 20, WE, 6 }, { 30, WE, 5 });
    CHECK_EQ(g.n, 1);
    CHECK_EQ(g.ticks[0], 20);
}

static void end_before_its_begin_is_no_duration(void)
{
    struct got g = FEED({ 10, WB, 5 }, { 5, WE, 5 }, { 20, WE, 5 });
    CHECK_EQ(g.n, 0);
}

static void the_oldest_open_begin_is_given_up_past_the_depth(void)
{
    static struct ev evs[PAIRING_DEPTH + 2];
    evs[0] = (struct ev){ 1, WB, 9 };
    for (unsigned i = 1; i <= PAIRING_DEPTH; i++)
        evs[i] = (struct ev){ 1 + i, TB, i };
    evs[PAIRING_DEPTH + 1] = (struct ev){ 1000, WE, 9 };
    CHECK_EQ(feed(evs, PAIRING_DEPTH + 2).n, 0);
    evs[PAIRING_DEPTH + 1] = (struct ev){ 1000, TE, 1 };   /* the next-oldest stays */
    struct got g = feed(evs, PAIRING_DEPTH + 2);
    CHECK_EQ(g.n, 1);
    CHECK_EQ(g.ticks[0], 1000 - 2);
}

int main(void)
{
    partners();
    nested_begins_of_one_pair_both_count();
    an_end_gives_up_the_begins_above_its_own();
    a0_must_match();
    end_before_its_begin_is_no_duration();
    the_oldest_open_begin_is_given_up_past_the_depth();
    return check_summary("test_pairing");
}
