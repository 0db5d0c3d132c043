/* test_tscmath.c — each time source's arithmetic: counter wrap (24-, 32-,
 * 16- and 64-bit), rates from the HPET period, the PM timer and the PIT,
 * CPUID 0x15/0x16 crystal ratios, the hypervisor leaf, the 0.5 %
 * cross-check tolerance, the 2 % past which a measurement refutes a
 * claimed rate, and why failed calibration windows failed. */
#include <string.h>
#include "check.h"
#include "time/tscmath.h"

#define GHZ2_3 2300000000ull

static void test_muldiv(void)
{
    CHECK_EQ(tscmath_muldiv(10, 20, 3), 66);
    CHECK_EQ(tscmath_muldiv(1ull << 63, 4, 8), 1ull << 62);        /* 2^65 inside */
    CHECK_EQ(tscmath_muldiv(1ull << 40, 1ull << 40, 1ull << 30), 1ull << 50);   /* 2^80 inside */
    CHECK_EQ(tscmath_muldiv(1ull << 40, 1ull << 40, 1), UINT64_MAX);            /* too big */
    CHECK_EQ(tscmath_muldiv(5, 5, 0), UINT64_MAX);
}

static void test_wrap(void)
{
    /* 24-bit PM timer across its wrap: 0xFFFFF0 -> 0x000010 is 0x20 ticks,
     * whatever the reserved upper byte reads. */
    CHECK_EQ(tscmath_elapsed(0xFFFFF0, 0x000010, 24), 0x20);
    CHECK_EQ(tscmath_elapsed(0xFFFFF0, 0xAB000010, 24), 0x20);
    CHECK_EQ(tscmath_elapsed(0x100, 0x300, 24), 0x200);
    /* 32-bit PM timer (TMR_VAL_EXT) and a 32-bit HPET. */
    CHECK_EQ(tscmath_elapsed(0xFFFFFFFEull, 0x5, 32), 7);
    CHECK_EQ(tscmath_elapsed(0x00FFFFF0, 0x01000010, 32), 0x20);   /* no false 24-bit wrap */
    /* PIT as an up-counter over 16 bits. */
    CHECK_EQ(tscmath_elapsed(0xFFF0, 0x0010, 16), 0x20);
    /* 64-bit HPET. */
    CHECK_EQ(tscmath_elapsed(~0ull - 1, 3, 64), 5);
    CHECK_EQ(tscmath_elapsed(1000, 5000, 64), 4000);
}

static void test_pm_timer(void)
{
    /* 10 ms of PM timer is 35795.45 ticks; 35795 ticks at 2.3 GHz took
     * 2.3e9 * 35795 / 3579545 TSC ticks. */
    uint64_t tsc = GHZ2_3 * 35795 / PM_TIMER_HZ;
    uint64_t hz = tscmath_rate(tsc, 35795, PM_TIMER_HZ, 1);
    CHECK(tscmath_diff_ppm(hz, GHZ2_3) < 1);
    /* The old bug: 279365 (ps) taken for femtoseconds is 1000x off. */
    CHECK(!tscmath_agree(tscmath_rate(tsc, 35795, 1000000000000000ull, 279365), GHZ2_3));
    CHECK_EQ(tscmath_ticks_in_us(10000, PM_TIMER_HZ, 1), 35796);      /* 35795.45 rounded up */
    CHECK_EQ(tscmath_ticks_in_us(1000000, PM_TIMER_HZ, 1), PM_TIMER_HZ);
    /* A full 24-bit lap (4.69 s) at 4 GHz: no overflow. */
    CHECK(tscmath_diff_ppm(tscmath_rate(4000000000ull * 0xFFFFFF / PM_TIMER_HZ, 0xFFFFFF,
                                        PM_TIMER_HZ, 1),
                           4000000000ull) < 1);
}

static void test_hpet(void)
{
    /* QEMU's HPET: 10 ns period (100 MHz). ICH's: 69841279 fs (14.318 MHz). */
    CHECK_EQ(tscmath_rate(23000000, 1000000, FS_PER_S, 10000000), GHZ2_3);
    uint64_t ticks = 143182, tsc = GHZ2_3 / 100;   /* 10 ms at 14.31818 MHz */
    CHECK(tscmath_diff_ppm(tscmath_rate(tsc, ticks, FS_PER_S, 69841279), GHZ2_3) < 5);
    CHECK_EQ(tscmath_ticks_in_us(10000, FS_PER_S, 10000000), 1000000);
    CHECK_EQ(tscmath_ticks_in_us(10000, FS_PER_S, 69841279), 143182);
    CHECK_EQ(tscmath_rate(123, 0, FS_PER_S, 10000000), 0);
}

static void test_pit(void)
{
    /* 1.1931818 MHz: 11932 ticks ~ 10 ms. */
    CHECK_EQ(tscmath_ticks_in_us(10000, PIT_HZ_NUM, PIT_HZ_DEN), 11932);
    uint64_t tsc = GHZ2_3 * 11932 * PIT_HZ_DEN / PIT_HZ_NUM;
    CHECK(tscmath_diff_ppm(tscmath_rate(tsc, 11932, PIT_HZ_NUM, PIT_HZ_DEN), GHZ2_3) < 1);
    /* PIT and PM timer share one 14.31818 MHz crystal: 3 PM ticks = 1 PIT tick. */
    CHECK_EQ(tscmath_rate(tsc, 11932, PIT_HZ_NUM, PIT_HZ_DEN),
             tscmath_rate(tsc, 3 * 11932, PM_TIMER_HZ, 1));
}

static void test_cpuid(void)
{
    /* A 24 MHz crystal, ratio 188/2. */
    CHECK_EQ(tscmath_cpuid15(2, 188, 24000000, 0), 2256000000ull);
    /* Crystal absent: the base frequency from leaf 0x16 is the TSC rate. */
    CHECK_EQ(tscmath_cpuid15(2, 188, 0, 2300), GHZ2_3);
    CHECK_EQ(tscmath_cpuid15(2, 188, 0, 0), 0);          /* nothing to go by */
    CHECK_EQ(tscmath_cpuid15(0, 188, 24000000, 2300), 0); /* ratio not enumerated */
    CHECK_EQ(tscmath_cpuid15(2, 0, 24000000, 2300), 0);
    /* Goldmont-style 19.2 MHz crystal. */
    CHECK_EQ(tscmath_cpuid15(3, 250, 19200000, 0), 1600000000ull);
    CHECK_EQ(tscmath_hypervisor(2300000), GHZ2_3);
    CHECK_EQ(tscmath_hypervisor(0), 0);
}

static void test_agreement(void)
{
    CHECK_EQ(tscmath_diff_ppm(1005, 1000), 5000);
    CHECK_EQ(tscmath_diff_ppm(995, 1000), 5000);
    CHECK(tscmath_agree(GHZ2_3 + GHZ2_3 / 200, GHZ2_3));      /* exactly 0.5 % */
    CHECK(!tscmath_agree(GHZ2_3 + GHZ2_3 / 199, GHZ2_3));     /* just over */
    CHECK(!tscmath_agree(2000000000ull, GHZ2_3));            /* the old fallback: 13 % */
    CHECK(!tscmath_agree(1, 0));
    CHECK(tscmath_plausible(GHZ2_3));
    CHECK(!tscmath_plausible(0));
    CHECK(!tscmath_plausible(GHZ2_3 * 1000));                 /* a clock read 1000x slow */
    CHECK(!tscmath_plausible(GHZ2_3 / 1000));
}

/* A TSC at or just under the 50 MHz floor (Bochs's default 50 MHz) fails
 * every window for that reason, and the console must say so rather than
 * blame the clock. */
static void test_windows(void)
{
    struct tsc_windows w = { 0 };
    CHECK(!tscmath_window(&w, 49999000));
    CHECK(!tscmath_window(&w, 49998700));
    CHECK(!tscmath_window(&w, 49999900));
    CHECK_EQ(w.tried, 3);
    CHECK_EQ(w.slow, 3);
    CHECK_EQ(w.low, 49998700);
    CHECK_EQ(w.high, 49999900);
    CHECK(strstr(tscmath_windows_why(&w), "under 50 MHz") != NULL);

    struct tsc_windows o = { 0 };
    CHECK(tscmath_window(&o, GHZ2_3));
    CHECK(!tscmath_window(&o, 0));
    CHECK_EQ(o.good, 1);
    CHECK_EQ(o.overran, 1);
    CHECK(strstr(tscmath_windows_why(&o), "overran") != NULL);

    struct tsc_windows m = { 0 };
    CHECK(!tscmath_window(&m, 0));
    CHECK(!tscmath_window(&m, 40000000));
    CHECK(strstr(tscmath_windows_why(&m), "some overran") != NULL);
    struct tsc_windows f = { 0 };
    CHECK(!tscmath_window(&f, GHZ2_3 * 1000));
    CHECK(strstr(tscmath_windows_why(&f), "over 20 GHz") != NULL);
}

/* A claimed rate a measurement refutes loses to it (Bochs's Tiger Lake:
 * CPUID 15h says 2419200000 Hz, the PM timer measures 50001675 Hz). */
static void test_verdict(void)
{
    CHECK_EQ(tscmath_verdict(2419200000ull, 50001675ull), TSC_REFUTED);
    CHECK_EQ(tscmath_verdict(3500000000ull, 49999000ull), TSC_REFUTED);
    CHECK_EQ(tscmath_verdict(GHZ2_3, GHZ2_3 + 1000), TSC_CONFIRMED);
    CHECK_EQ(tscmath_verdict(GHZ2_3 + GHZ2_3 / 200, GHZ2_3), TSC_CONFIRMED);   /* 0.5 % */
    CHECK_EQ(tscmath_verdict(GHZ2_3 + GHZ2_3 / 100, GHZ2_3), TSC_DIFFERS);     /* 1 % */
    CHECK_EQ(tscmath_verdict(GHZ2_3 + GHZ2_3 / 50, GHZ2_3), TSC_DIFFERS);      /* 2 % */
    CHECK_EQ(tscmath_verdict(GHZ2_3 + GHZ2_3 / 40, GHZ2_3), TSC_REFUTED);      /* 2.5 % */
    CHECK_EQ(tscmath_verdict(GHZ2_3, 0), TSC_REFUTED);
}

int main(void)
{
    test_windows();
    test_verdict();
    test_muldiv();
    test_wrap();
    test_pm_timer();
    test_hpet();
    test_pit();
    test_cpuid();
    test_agreement();
    return check_summary("test_tscmath");
}
