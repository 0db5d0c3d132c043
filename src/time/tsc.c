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
 * still failed is named on the console, never passed over silently. */
static uint64_t calibrate(enum refclock_kind k, uint32_t window_us)
{
    uint64_t rate[CAL_TRIALS];
    unsigned got = 0, tried = 0;
    if (!refclock_probe(k))
        return 0;
    /* ... but a clock none of whose first CAL_TRIALS windows worked is
     * given up at once: tsc_src=none must come within 1 s. */
    while (got < CAL_TRIALS && tried < CAL_ATTEMPTS && (got || tried < CAL_TRIALS)) {
        tried++;
        uint64_t r = refclock_tsc_rate(k, window_us);
        if (r && tscmath_plausible(r))
            rate[got++] = r;
    }
    if (got < CAL_TRIALS) {
        kprintf("tsc: %s counts, but %u of %u calibration windows failed; not used\n",
                refclock_name(k), tried - got, tried);
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

/* Best source first; the next working one checks it. */
static void choose(void)
{
    enum refclock_kind k = REFCLOCK_HPET, check_k;
    if ((hz = from_cpuid15())) {
        source = "cpuid15";
    } else if ((hz = from_hypervisor())) {
        source = "hypervisor";
    } else if ((hz = first_calibration(REFCLOCK_HPET, &k, CAL_WINDOW_US))) {
        source = refclock_name(k++);
    } else {
        return;
    }
    uint64_t check = first_calibration(k, &check_k, CHECK_WINDOW_US);
    if (check && !tscmath_agree(hz, check))
        kprintf("tsc: %s says %lu Hz but %s measures %lu Hz (%lu ppm apart); using %s\n",
                source, hz, refclock_name(check_k), check, tscmath_diff_ppm(check, hz), source);
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
