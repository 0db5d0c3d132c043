/* test_tsc.c — time/tsc.c's choice of a TSC source and the bound on its
 * calibration, against fake reference clocks (refclock.h) and a CPU that
 * has no CPUID frequency leaves. Each window a clock is asked for either
 * works or fails as the test says; the windows asked are counted.
 *
 * The bound is what test_timesrc once measured on a boot ("calibration
 * ends within 1 s", "READY no later than with the HPET"), which on an
 * emulator measured the host's load: here it is checked exactly, for
 * every pattern of good and failed windows on every clock. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "arch/cpu.h"
#include "check.h"
#include "lib/kprintf.h"
#include "time/refclock.h"

/* tsc.c asks this CPU, not the host's: no leaf 0x15, no hypervisor leaf. */
static struct cpuid_regs test_cpuid(uint32_t leaf, uint32_t sub)
{
    (void)sub;
    struct cpuid_regs r = { 0, 0, 0, 0 };
    if (leaf == 0)
        r.eax = 1;
    else if (leaf == 0x80000000u)
        r.eax = 0x80000000u;
    return r;
}
#define cpuid test_cpuid
#include "time/tsc.c"
#undef cpuid

#define RATE                 2400000000ull     /* what every good window measures */
#define WINDOWS_MAX          64                /* more than any pass may ask */
/* The bound, in microseconds of windows asked for. Each window may
 * overrun to WINDOW_SLACK (2) times its length, counted in TSC ticks sized
 * for a 10 GHz TSC (refclock.c), so on a TSC of 2.5 GHz or more a window
 * lasts at most 8 times its length: with no usable clock, tsc_src=none
 * comes within 125 ms x 8 = 1 s; whatever the clocks do, each is tried
 * once, for CAL_ATTEMPTS windows at most. */
#define NONE_BOUND_US        125000u
#define CALIBRATION_BOUND_US (REFCLOCK_COUNT * CAL_ATTEMPTS * CAL_WINDOW_US)

struct fake_clock {
    bool present;                 /* refclock_probe() */
    uint64_t good;                    /* bit i: the i-th window works */
    unsigned windows;                 /* windows asked for */
    uint64_t window_us;               /* their lengths, summed */
};

static struct fake_clock fake[REFCLOCK_COUNT];
static char said[4096];

int kprintf(const char *fmt, ...)
{
    size_t used = strlen(said);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(said + used, sizeof said - used, fmt, ap);
    va_end(ap);
    return n;
}

bool refclock_probe(enum refclock_kind k) { return fake[k].present; }

const char *refclock_name(enum refclock_kind k)
{
    static const char *const names[REFCLOCK_COUNT] = { "hpet", "pmtimer", "pit" };
    return k < REFCLOCK_COUNT ? names[k] : "none";
}

uint64_t refclock_tsc_rate(enum refclock_kind k, uint32_t us)
{
    struct fake_clock *c = &fake[k];
    unsigned i = c->windows++;
    c->window_us += us;
    return i < WINDOWS_MAX && (c->good >> i & 1) ? RATE : 0;
}

/* Boot with these clocks: (present, good windows) per kind. */
static void boot(bool hpet, uint64_t hpet_good, bool pm, uint64_t pm_good,
                 bool pit, uint64_t pit_good)
{
    memset(fake, 0, sizeof fake);
    said[0] = 0;
    fake[REFCLOCK_HPET] = (struct fake_clock){ hpet, hpet_good, 0, 0 };
    fake[REFCLOCK_PMTIMER] = (struct fake_clock){ pm, pm_good, 0, 0 };
    fake[REFCLOCK_PIT] = (struct fake_clock){ pit, pit_good, 0, 0 };
    tsc_init();
}

static uint64_t windows_us(void)
{
    uint64_t us = 0;
    for (int k = 0; k < REFCLOCK_COUNT; k++)
        us += fake[k].window_us;
    return us;
}

#define ALL ~0ull

static void test_sources_in_order(void)
{
    boot(true, ALL, true, ALL, true, ALL);
    CHECK(!strcmp(tsc_source(), "hpet"));
    CHECK_EQ(tsc_hz(), RATE);
    CHECK_EQ(fake[REFCLOCK_HPET].windows, CAL_TRIALS);
    CHECK_EQ(fake[REFCLOCK_HPET].window_us, CAL_TRIALS * CAL_WINDOW_US);
    CHECK_EQ(fake[REFCLOCK_PMTIMER].windows, CAL_TRIALS);       /* the check */
    CHECK_EQ(fake[REFCLOCK_PMTIMER].window_us, CAL_TRIALS * CHECK_WINDOW_US);
    CHECK_EQ(fake[REFCLOCK_PIT].windows, 0);
    CHECK(!strstr(said, "says"));                               /* they agree */

    boot(false, 0, true, ALL, true, ALL);                       /* hpet=off */
    CHECK(!strcmp(tsc_source(), "pmtimer"));
    CHECK_EQ(fake[REFCLOCK_HPET].windows, 0);
    CHECK_EQ(fake[REFCLOCK_PIT].windows, CAL_TRIALS);

    boot(false, 0, false, 0, true, ALL);                        /* acpi=off */
    CHECK(!strcmp(tsc_source(), "pit"));
    CHECK_EQ(tsc_hz(), RATE);
}

static void test_no_source_at_all(void)
{
    boot(false, 0, false, 0, false, 0);                         /* acpi=off,pit=off */
    CHECK(!strcmp(tsc_source(), "none"));
    CHECK_EQ(tsc_hz(), FALLBACK_HZ);
    CHECK_EQ(windows_us(), 0);                                  /* probes only */
    CHECK(strstr(said, "tsc: no usable frequency source") != NULL);

    /* Every clock counts, but no window works: each given up after
     * CAL_TRIALS windows, and none within its bound. */
    boot(true, 0, true, 0, true, 0);
    CHECK(!strcmp(tsc_source(), "none"));
    for (int k = 0; k < REFCLOCK_COUNT; k++)
        CHECK_EQ(fake[k].windows, CAL_TRIALS);
    CHECK(windows_us() <= NONE_BOUND_US);
}

static void test_failing_clock_is_given_up_and_named(void)
{
    /* Counts, but not one window works: given up after CAL_TRIALS
     * windows, not CAL_ATTEMPTS, and said; the PM timer takes over. */
    boot(true, 0, true, ALL, true, ALL);
    CHECK_EQ(fake[REFCLOCK_HPET].windows, CAL_TRIALS);
    CHECK(strstr(said, "tsc: hpet counts, but 3 of 3 calibration windows failed"));
    CHECK(!strcmp(tsc_source(), "pmtimer"));

    /* One bad window is retried: the best clock is kept. */
    boot(true, ALL & ~1ull, true, ALL, true, ALL);
    CHECK(!strcmp(tsc_source(), "hpet"));
    CHECK_EQ(fake[REFCLOCK_HPET].windows, CAL_TRIALS + 1);

    /* Good, then failing: CAL_ATTEMPTS windows at most. */
    boot(true, 1, true, ALL, true, ALL);
    CHECK_EQ(fake[REFCLOCK_HPET].windows, CAL_ATTEMPTS);
    CHECK(!strcmp(tsc_source(), "pmtimer"));
}

/* Every pattern of good and failed windows (the first CAL_ATTEMPTS of
 * each clock; later ones never asked), every clock present: no pass asks
 * a clock for more than CAL_ATTEMPTS windows, and the whole calibration
 * stays within its bound. */
static void test_every_pattern_stays_within_the_bound(void)
{
    const uint64_t patterns = 1ull << CAL_ATTEMPTS;
    uint64_t worst = 0;
    unsigned most = 0;
    for (uint64_t a = 0; a < patterns; a++)
        for (uint64_t b = 0; b < patterns; b++)
            for (uint64_t c = 0; c < patterns; c++) {
                boot(true, a, true, b, true, c);
                uint64_t us = windows_us();
                worst = us > worst ? us : worst;
                for (int k = 0; k < REFCLOCK_COUNT; k++)
                    most = fake[k].windows > most ? fake[k].windows : most;
            }
    CHECK(most <= CAL_ATTEMPTS);
    CHECK(worst <= CALIBRATION_BOUND_US);
    printf("test_tsc: worst case %llu us of windows, %u windows on one clock\n",
           (unsigned long long)worst, most);
}

int main(void)
{
    test_sources_in_order();
    test_no_source_at_all();
    test_failing_clock_is_given_up_and_named();
    test_every_pattern_stays_within_the_bound();
    return check_summary("test_tsc");
}
