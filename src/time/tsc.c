/* tsc.c — TSC frequency and invariance. */
#include "time/tsc.h"
#include "arch/cpu.h"
#include "lib/kprintf.h"
#include "lib/median.h"
#include "time/refclock.h"
#include "time/tscmath.h"

#define LEAF_TSC_CRYSTAL 0x15
#define LEAF_CPU_FREQ    0x16
#define LEAF_HV_BASE     0x40000000
#define LEAF_HV_TIMING   0x40000010
#define LEAF_POWER_MGMT  0x80000007
#define INVARIANT_TSC    (1u << 8)
/* Time to READY matters (#8): three 10 ms windows give the rate to a few
 * ppm (their median drops one late wake-up), and the cross-check, which
 * needs 0.5%, takes three 5 ms windows: ~45 ms in all, less than the
 * single five-window calibration this replaced. */
#define CAL_TRIALS       3
#define CAL_ATTEMPTS     6
#define CAL_WINDOW_US    10000
#define CHECK_WINDOW_US  5000
#define FALLBACK_HZ      2000000000ul

static uint64_t hz;
static const char *source = "none";
static const char *check = "none";     /* the clock that confirmed hz */
static bool invariant;

static uint64_t from_cpuid15(void)
{
    uint32_t max = cpuid(0, 0).eax;
    if (max < LEAF_TSC_CRYSTAL)
        return 0;
    struct cpuid_regs r = cpuid(LEAF_TSC_CRYSTAL, 0);
    uint32_t base_mhz = max >= LEAF_CPU_FREQ ? cpuid(LEAF_CPU_FREQ, 0).eax & 0xFFFF : 0;
    return tscmath_cpuid15(r.eax, r.ebx, r.ecx, base_mhz);
}

static uint64_t from_hypervisor(void)
{
    if (!(cpuid(1, 0).ecx & CPUID1_HYPERVISOR))
        return 0;
    if (cpuid(LEAF_HV_BASE, 0).eax < LEAF_HV_TIMING)
        return 0;
    return tscmath_hypervisor(cpuid(LEAF_HV_TIMING, 0).eax);
}

/* The median of CAL_TRIALS good windows against clock k; 0 when k is
 * absent or stops counting. A window that overran (a vCPU or SMI stall)
 * or gave a rate no TSC has is retried, up to CAL_ATTEMPTS in all: one
 * bad window must not demote the best clock. A clock that answered but
 * still failed is named on the console with why its windows failed,
 * never passed over silently. */
static uint64_t calibrate(enum refclock_kind k, uint32_t window_us)
{
    uint64_t rate[CAL_TRIALS];
    struct tsc_windows w = { 0 };
    if (!refclock_probe(k))
        return 0;
    /* ... but a clock none of whose first CAL_TRIALS windows worked is
     * given up at once: tsc_src=none must come within 1 s. */
    while (w.good < CAL_TRIALS && w.tried < CAL_ATTEMPTS && (w.good || w.tried < CAL_TRIALS)) {
        uint64_t r = refclock_tsc_rate(k, window_us);
        if (tscmath_window(&w, r))
            rate[w.good - 1] = r;
    }
    if (w.good < CAL_TRIALS) {
        kprintf("tsc: %s counts, but %u of %u calibration windows failed: %s", refclock_name(k),
                w.tried - w.good, w.tried, tscmath_windows_why(&w));
        if (w.low)
            kprintf(" (%lu-%lu Hz)", w.low, w.high);
        kprintf("; not used\n");
        return 0;
    }
    return median_u64(rate, CAL_TRIALS);
}

/* The first clock from `from` on that gives a rate; its kind in *k. */
static uint64_t first_calibration(enum refclock_kind from, enum refclock_kind *k,
                                  uint32_t window_us)
{
    for (*k = from; *k < REFCLOCK_COUNT; (*k)++) {
        uint64_t r = calibrate(*k, window_us);
        if (r)
            return r;
    }
    return 0;
}

/* Clock k measured m, too far from hz to confirm it: hz stays, said. */
static void say_unconfirmed(enum refclock_kind k, uint64_t m)
{
    kprintf("tsc: %s says %lu Hz but %s measures %lu Hz (%lu ppm apart); using %s, "
            "unconfirmed (tsc_check=none)\n",
            source, hz, refclock_name(k), m,
            tscmath_diff_ppm(m, hz), source);
}

/* The next working clock from `from` on checks a measured rate. */
static void cross_check(enum refclock_kind from)
{
    enum refclock_kind k;
    uint64_t m = first_calibration(from, &k, CHECK_WINDOW_US);
    if (!m)
        kprintf("tsc: no other clock could check %s's %lu Hz: unconfirmed (tsc_check=none)\n",
                source, hz);
    else if (tscmath_agree(hz, m))
        check = refclock_name(k);
    else
        say_unconfirmed(k, m);
}

/* A rate CPUID or a hypervisor claims is measured against the best
 * working clock: confirmed, kept but unconfirmed, or refuted (then the
 * measurement wins and the next clock checks it). Nothing to measure
 * with leaves the claim unverified, and the console says so loudly. */
static void verify_claim(void)
{
    enum refclock_kind k;
    uint64_t m = first_calibration(REFCLOCK_HPET, &k, CHECK_WINDOW_US);
    if (!m) {
        kprintf("tsc: WARNING: %s says %lu Hz and no clock confirmed it: every time this "
                "machine reports is unverified (tsc_check=none)\n",
                source, hz);
        return;
    }
    switch (tscmath_verdict(hz, m)) {
    case TSC_CONFIRMED:
        check = refclock_name(k);
        return;
    case TSC_DIFFERS:
        say_unconfirmed(k, m);
        return;
    case TSC_REFUTED:
        break;
    }
    kprintf("tsc: %s says %lu Hz but %s measures %lu Hz (%lu ppm apart); %s is wrong, "
            "using the measurement (tsc_src=%s)\n",
            source, hz, refclock_name(k), m,
            tscmath_diff_ppm(m, hz), source, refclock_name(k));
    uint64_t better = calibrate(k, CAL_WINDOW_US);   /* longer windows, when they work */
    hz = better ? better : m;
    source = refclock_name(k);
    cross_check((enum refclock_kind)(k + 1));
}

/* Best source first; another clock checks it. */
static void choose(void)
{
    enum refclock_kind k = REFCLOCK_HPET;
    if ((hz = from_cpuid15())) {
        source = "cpuid15";
        verify_claim();
    } else if ((hz = from_hypervisor())) {
        source = "hypervisor";
        verify_claim();
    } else if ((hz = first_calibration(REFCLOCK_HPET, &k, CAL_WINDOW_US))) {
        source = refclock_name(k);
        cross_check((enum refclock_kind)(k + 1));
    }
}

void tsc_init(void)
{
    uint32_t max_ext = cpuid(0x80000000, 0).eax;
    invariant = max_ext >= LEAF_POWER_MGMT && (cpuid(LEAF_POWER_MGMT, 0).edx & INVARIANT_TSC);
    choose();
    if (!hz) {
        kprintf("tsc: no usable frequency source (CPUID, HPET, PM timer, PIT); assuming %lu Hz\n",
                FALLBACK_HZ);
        hz = FALLBACK_HZ;
        source = "none";
    }
}

uint64_t tsc_hz(void) { return hz; }
const char *tsc_source(void) { return source; }
const char *tsc_check(void) { return check; }
bool tsc_invariant(void) { return invariant; }
uint64_t tsc_from_us(uint64_t us) { return us * hz / 1000000; }
/* Whole seconds first: ticks * 1e6 would overflow after ~2.5 h at 2 GHz. */
uint64_t tsc_to_us(uint64_t ticks)
{
    return hz ? ticks / hz * 1000000 + ticks % hz * 1000000 / hz : 0;
}

void tsc_delay_us(uint64_t us)
{
    uint64_t start = rdtsc(), wait = tsc_from_us(us);
    while (rdtsc() - start < wait)
        cpu_relax();
}
