/* test_deadline.c — the bounded wait (time/deadline.c): "passed" across
 * the 64-bit wrap, and the register wait against a fake register that
 * becomes ready after N reads, becomes ready only after the bound, or
 * never does. The TSC is the host's own (rdtsc); only its rate is given
 * here, as tsc.c would have calibrated it. */
#include <stdint.h>
#include "check.h"
#include "time/deadline.h"
#include "time/tsc.h"

uint64_t tsc_from_us(uint64_t us) { return us * 3000; }   /* a 3 GHz TSC, near enough */

/* A register that reads `ready` from its n-th read on (0 before), or
 * never when n is 0. With `stall`, its first read (0) is held up until
 * that deadline has passed, as an SMI would hold up the CPU, and it
 * reads `ready` from then on. */
struct fake {
    uint32_t ready;
    unsigned n, reads;
    const struct deadline *stall;
};

static uint32_t fake_read(void *ctx)
{
    struct fake *f = ctx;
    f->reads++;
    if (f->stall) {
        if (f->reads > 1)
            return f->ready;
        while (!deadline_passed(*f->stall));
        return 0;
    }
    return f->n && f->reads >= f->n ? f->ready : 0;
}

static void test_passed(void)
{
    struct deadline d = { 1000 };
    CHECK(!deadline_passed_at(d, 0));
    CHECK(!deadline_passed_at(d, 999));
    CHECK(!deadline_passed_at(d, 1000));            /* at the bound: not yet past */
    CHECK(deadline_passed_at(d, 1001));
    /* A deadline just below the wrap, "now" just after it. */
    struct deadline w = { UINT64_MAX - 5 };
    CHECK(!deadline_passed_at(w, UINT64_MAX - 10));
    CHECK(!deadline_passed_at(w, UINT64_MAX - 5));
    CHECK(deadline_passed_at(w, UINT64_MAX));
    CHECK(deadline_passed_at(w, 3));                /* wrapped: 9 ticks past */
    /* A deadline just after the wrap, "now" still before it. */
    struct deadline a = { 4 };
    CHECK(!deadline_passed_at(a, UINT64_MAX - 2));
    CHECK(deadline_passed_at(a, 5));
    /* Built from microseconds: in the future, then past. */
    struct deadline soon = deadline_in_us(1000);
    CHECK(!deadline_passed(soon));
    while (!deadline_passed(soon));
    CHECK(deadline_passed(soon));
}

static void test_wait_ready_after_n(void)
{
    struct fake f = { .ready = 0x81, .n = 5 };
    CHECK(wait_until(fake_read, &f, 0x01, 0x01, deadline_in_us(5000000)));
    CHECK_EQ(f.reads, 5);                           /* stops at the first ready read */

    struct fake now = { .ready = 0x4, .n = 1 };
    CHECK(wait_until(fake_read, &now, 0x4, 0x4, deadline_in_us(5000000)));
    CHECK_EQ(now.reads, 1);

    /* Waiting for a bit to clear: the register reads 0 from its 3rd read. */
    struct fake clr = { .ready = 0, .n = 3 };
    CHECK(wait_until(fake_read, &clr, 0x1, 0x0, deadline_in_us(5000000)));
    CHECK_EQ(clr.reads, 1);                         /* 0 before "ready" too: at once */

    /* Bits outside the mask do not matter; bits inside must all match. */
    struct fake part = { .ready = 0x3, .n = 2 };
    CHECK(!wait_until(fake_read, &part, 0x7, 0x7, deadline_in_us(2000)));
    CHECK(part.reads > 2);
}

static void test_wait_never(void)
{
    struct fake f = { .ready = 1, .n = 0 };
    struct deadline d = deadline_in_us(2000);
    CHECK(!wait_until(fake_read, &f, 1, 1, d));
    CHECK(deadline_passed(d));                      /* it waited out its bound */
    CHECK(f.reads >= 2);                            /* polled, then read once more */
}

static void test_wait_ready_at_the_bound(void)
{
    /* Read not ready, then held up past the bound (an SMI) while the
     * register became ready: the last read after the bound counts. */
    struct deadline d = deadline_in_us(1000);
    struct fake f = { .ready = 2, .stall = &d };
    CHECK(wait_until(fake_read, &f, 2, 2, d));
    CHECK_EQ(f.reads, 2);
}

static void test_wait_mmio32(void)
{
    volatile uint32_t reg = 0x80000001u;
    CHECK(wait_mmio32(&reg, 0x80000000u, 0x80000000u, 1000));
    CHECK(wait_mmio32(&reg, 0x2, 0, 1000));
    struct deadline d = deadline_in_us(2000);
    CHECK(!wait_mmio32(&reg, 0x1, 0, 2000));
    CHECK(deadline_passed(d));
}

int main(void)
{
    test_passed();
    test_wait_ready_after_n();
    test_wait_never();
    test_wait_ready_at_the_bound();
    test_wait_mmio32();
    return check_summary("test_deadline");
}
