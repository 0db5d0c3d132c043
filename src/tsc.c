/* tsc.c — TSC frequency and invariance. */
#include "tsc.h"
#include "console.h"
#include "cpu.h"
#include "refclock.h"

#define LEAF_TSC_CRYSTAL     0x15
#define LEAF_CPU_FREQ        0x16
#define LEAF_HV_BASE         0x40000000
#define LEAF_HV_TIMING       0x40000010
#define LEAF_POWER_MGMT      0x80000007
#define CPUID1_HYPERVISOR    (1u << 31)
#define INVARIANT_TSC        (1u << 8)
#define CAL_TRIALS           5
#define CAL_WINDOW_US        10000
#define FALLBACK_HZ          2000000000ul

static uint64_t hz;
static const char *source = "none";
static bool invariant;

static uint64_t from_cpuid15(void)
{
    if (cpuid(0, 0).eax < LEAF_TSC_CRYSTAL)
        return 0;
    struct cpuid_regs r = cpuid(LEAF_TSC_CRYSTAL, 0);
    if (!r.eax || !r.ebx)
        return 0;
    uint64_t crystal = r.ecx;
    if (!crystal && cpuid(0, 0).eax >= LEAF_CPU_FREQ) {
        /* No crystal rate: derive it from the base frequency (MHz). */
        uint64_t base_mhz = cpuid(LEAF_CPU_FREQ, 0).eax & 0xFFFF;
        return base_mhz * 1000000ull;
    }
    return crystal * r.ebx / r.eax;
}

static uint64_t from_hypervisor(void)
{
    if (!(cpuid(1, 0).ecx & CPUID1_HYPERVISOR))
        return 0;
    if (cpuid(LEAF_HV_BASE, 0).eax < LEAF_HV_TIMING)
        return 0;
    return (uint64_t)cpuid(LEAF_HV_TIMING, 0).eax * 1000;
}

static void sort(uint64_t *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j]; v[j] = v[j - 1]; v[j - 1] = t;
        }
}

static uint64_t calibrate(enum refclock_kind k)
{
    uint64_t rate[CAL_TRIALS];
    for (int i = 0; i < CAL_TRIALS; i++)
        if (!(rate[i] = refclock_tsc_rate(k, CAL_WINDOW_US)))
            return 0;
    sort(rate, CAL_TRIALS);
    return rate[CAL_TRIALS / 2];
}

void tsc_init(void)
{
    uint32_t max_ext = cpuid(0x80000000, 0).eax;
    invariant = max_ext >= LEAF_POWER_MGMT && (cpuid(LEAF_POWER_MGMT, 0).edx & INVARIANT_TSC);
    if ((hz = from_cpuid15())) {
        source = "cpuid15";
    } else if ((hz = from_hypervisor())) {
        source = "hypervisor";
    } else {
        enum refclock_kind k = refclock_select();
        hz = calibrate(k);
        source = refclock_name(k);
    }
    if (!hz) {
        kprintf("tsc: no usable frequency source; assuming %lu Hz\n", FALLBACK_HZ);
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
