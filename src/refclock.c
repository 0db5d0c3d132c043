/* refclock.c — HPET, ACPI PM timer and PIT as calibration references. */
#include "refclock.h"
#include "acpi.h"
#include "cpu.h"

#define HPET_CAP            0x000    /* bits 63:32: counter period in fs */
#define HPET_CONFIG         0x010
#define HPET_COUNTER        0x0F0
#define HPET_ENABLE         1u
#define FS_PER_US           1000000000ull
#define PM_TIMER_FS         279365ull     /* 1e15 / 3579545 Hz */
#define PIT_HZ              1193182ull
#define PIT_CH2_DATA        0x42
#define PIT_MODE            0x43
#define PIT_GATE            0x61     /* bit 0 gate, bit 1 speaker, bit 5 OUT2 */
#define PIT_MAX_US          50000
#define GIVE_UP_TSC         (1ull << 34)  /* several seconds at any sane rate */

static volatile uint64_t *hpet;
static uint64_t hpet_fs;
static uint16_t pm_port;
static uint32_t pm_mask;

static uint64_t hpet_read(void) { return hpet[HPET_COUNTER / 8]; }
static uint32_t pm_read(void) { return inl(pm_port) & pm_mask; }

static bool hpet_setup(void)
{
    uint64_t base = acpi_hpet_base();
    if (!base)
        return false;
    hpet = (volatile uint64_t *)(uintptr_t)base;
    hpet_fs = hpet[HPET_CAP / 8] >> 32;
    if (hpet_fs == 0 || hpet_fs > 100000000ull)   /* spec: period <= 100 ns */
        return false;
    hpet[HPET_CONFIG / 8] |= HPET_ENABLE;
    uint64_t a = hpet_read(), t = rdtsc();
    while (hpet_read() == a)
        if (rdtsc() - t > GIVE_UP_TSC / 1024)
            return false;
    return true;
}

static bool pm_setup(void)
{
    pm_port = acpi_pm_timer_port();
    if (!pm_port)
        return false;
    pm_mask = acpi_pm_timer_32bit() ? 0xFFFFFFFFu : 0xFFFFFFu;
    uint32_t a = pm_read();
    uint64_t t = rdtsc();
    while (pm_read() == a)
        if (rdtsc() - t > GIVE_UP_TSC / 1024)
            return false;
    return true;
}

enum refclock_kind refclock_select(void)
{
    if (hpet_setup())
        return REFCLOCK_HPET;
    if (pm_setup())
        return REFCLOCK_PMTIMER;
    return REFCLOCK_PIT;
}

const char *refclock_name(enum refclock_kind k)
{
    switch (k) {
    case REFCLOCK_HPET:    return "hpet";
    case REFCLOCK_PMTIMER: return "pmtimer";
    case REFCLOCK_PIT:     return "pit";
    default:               return "none";
    }
}

/* One reading of the reference clock paired with the TSC. The pair is
 * bracketed by two TSC reads and the tightest of several tries is kept: a
 * reading delayed by an SMI, a host preemption or a slow MMIO exit would
 * otherwise skew the result. */
struct pair { uint64_t tsc, ref; };

static struct pair sample(uint64_t (*read)(void))
{
    struct pair best = { 0, 0 };
    uint64_t width = ~0ull;
    for (int i = 0; i < 8; i++) {
        uint64_t a = rdtsc(), r = read(), b = rdtsc();
        if (b - a < width) {
            width = b - a;
            best = (struct pair){ a + (b - a) / 2, r };
        }
    }
    return best;
}

static uint64_t hpet_read64(void) { return hpet_read(); }
static uint64_t pm_read64(void) { return pm_read(); }

/* TSC ticks per second over a window of at least `us` on `read`, which
 * counts at `fs_per_tick` femtoseconds and wraps at `mask`. */
static uint64_t rate(uint64_t (*read)(void), uint64_t fs_per_tick, uint64_t mask, uint32_t us)
{
    struct pair p0 = sample(read), p1;
    uint64_t ticks = us * FS_PER_US / fs_per_tick, t0 = rdtsc();
    while (((read() - p0.ref) & mask) < ticks)
        if (rdtsc() - t0 > GIVE_UP_TSC)
            return 0;
    p1 = sample(read);
    uint64_t ns = ((p1.ref - p0.ref) & mask) * fs_per_tick / 1000000;
    return ns ? (p1.tsc - p0.tsc) * 1000000000ull / ns : 0;
}

/* PIT channel 2 one-shot with the gate through port 0x61: OUT2 rises when
 * the count reaches zero (mode 0, "interrupt on terminal count"). */
static uint64_t measure_pit(uint32_t us)
{
    if (us > PIT_MAX_US)
        us = PIT_MAX_US;
    uint16_t count = (uint16_t)(us * PIT_HZ / 1000000);
    outb(PIT_GATE, (inb(PIT_GATE) & ~0x02) | 0x01);
    outb(PIT_MODE, 0xB0);                  /* channel 2, lo/hi byte, mode 0 */
    outb(PIT_CH2_DATA, count & 0xFF);
    outb(PIT_CH2_DATA, count >> 8);
    uint64_t t0 = rdtsc();
    while (!(inb(PIT_GATE) & 0x20))
        if (rdtsc() - t0 > GIVE_UP_TSC)
            return 0;
    return rdtsc() - t0;
}

uint64_t refclock_tsc_rate(enum refclock_kind k, uint32_t us)
{
    switch (k) {
    case REFCLOCK_HPET:    return rate(hpet_read64, hpet_fs, ~0ull, us);
    case REFCLOCK_PMTIMER: return rate(pm_read64, PM_TIMER_FS, pm_mask, us);
    case REFCLOCK_PIT: {
        uint64_t t = measure_pit(us);
        return t * 1000000ull / (us > PIT_MAX_US ? PIT_MAX_US : us);
    }
    default:               return 0;
    }
}
