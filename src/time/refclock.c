/* refclock.c — HPET, ACPI PM timer and PIT as calibration references.
 * The rate arithmetic (wrap, periods, ratios) lives in tscmath.c. */
#include "time/refclock.h"
#include "arch/cpu.h"
#include "firmware/acpi.h"
#include "time/tscmath.h"

#define HPET_CAP            0x000    /* GCAP_ID: 63:32 period (fs), 13 COUNT_SIZE_CAP */
#define HPET_CONFIG         0x010    /* GEN_CONF: bit 0 ENABLE_CNF */
#define HPET_COUNTER        0x0F0    /* MAIN_CNT */
#define HPET_ENABLE         1u
#define HPET_COUNT_64       (1u << 13)
#define HPET_MAX_FS         100000000ull  /* spec: period <= 100 ns */
#define PIT_CH2_DATA        0x42
#define PIT_MODE            0x43     /* mode/command register */
#define PIT_CH2_RATE        0xB4     /* channel 2, lobyte/hibyte, mode 2 (rate generator) */
#define PIT_CH2_LATCH       0x80     /* counter latch command, channel 2 */
#define PIT_GATE            0x61     /* NMI status/control: bit 0 gate 2, bit 1 speaker */
#define PIT_GATE2           0x01
#define PIT_SPEAKER         0x02
/* Bounds are in TSC ticks before the TSC's rate is known: sized for a
 * 10 GHz TSC, so they last at least that long on any real CPU (and ~4x
 * longer at 2.5 GHz). */
#define ASSUMED_MAX_TSC_MHZ 10000ull
#define PROBE_US            1000     /* a live clock ticks within 1 ms */
#define WINDOW_SLACK        2        /* a window may take twice its length */
#define PAIR_TRIES          8

struct clock {
    const char *name;
    uint64_t (*read)(void);
    unsigned bits;                /* counter width: wraps at 2^bits */
    uint64_t num, den;            /* frequency num/den Hz */
};

static volatile uint64_t *hpet;
static uint16_t pm_port;

static uint64_t hpet_read(void) { return hpet[HPET_COUNTER / 8]; }
static uint64_t pm_read(void) { return inl(pm_port); }

/* Channel 2 counts down from 65536 in mode 2; latch, then low and high
 * byte. Returned as an up-counter so the same wrap arithmetic applies. */
static uint64_t pit_read(void)
{
    outb(PIT_MODE, PIT_CH2_LATCH);
    uint8_t lo = inb(PIT_CH2_DATA), hi = inb(PIT_CH2_DATA);
    return (uint16_t)(0x10000u - ((unsigned)hi << 8 | lo));
}

static struct clock clocks[REFCLOCK_COUNT] = {
    [REFCLOCK_HPET] = { "hpet", hpet_read, 64, FS_PER_S, 1 },
    [REFCLOCK_PMTIMER] = { "pmtimer", pm_read, 24, PM_TIMER_HZ, 1 },
    [REFCLOCK_PIT] = { "pit", pit_read, 16, PIT_HZ_NUM, PIT_HZ_DEN },
};

static uint64_t bound_tsc(uint64_t us) { return us * ASSUMED_MAX_TSC_MHZ; }

static bool hpet_setup(struct clock *c)
{
    uint64_t base = acpi_hpet_base();
    if (!base)
        return false;
    hpet = (volatile uint64_t *)(uintptr_t)base;
    uint64_t cap = hpet[HPET_CAP / 8], fs = cap >> 32;
    if (fs == 0 || fs > HPET_MAX_FS)
        return false;
    c->den = fs;                     /* FS_PER_S / fs Hz */
    c->bits = cap & HPET_COUNT_64 ? 64 : 32;
    hpet[HPET_CONFIG / 8] |= HPET_ENABLE;
    return true;
}

static bool pm_setup(struct clock *c)
{
    pm_port = acpi_pm_timer_port();
    c->bits = acpi_pm_timer_32bit() ? 32 : 24;   /* FADT TMR_VAL_EXT */
    return pm_port != 0;
}

/* Gate channel 2 on with the speaker off; mode 2 with count 0 (65536)
 * makes the counter run forever, reloading itself. */
static bool pit_setup(struct clock *c)
{
    (void)c;
    outb(PIT_GATE, (uint8_t)((inb(PIT_GATE) & ~PIT_SPEAKER) | PIT_GATE2));
    outb(PIT_MODE, PIT_CH2_RATE);
    outb(PIT_CH2_DATA, 0);
    outb(PIT_CH2_DATA, 0);
    return true;
}

static uint64_t now(const struct clock *c)
{
    return tscmath_elapsed(0, c->read(), c->bits);
}

bool refclock_probe(enum refclock_kind k)
{
    struct clock *c = &clocks[k];
    static bool (*const setup[REFCLOCK_COUNT])(struct clock *) = { hpet_setup, pm_setup, pit_setup };
    if (!setup[k](c))
        return false;
    uint64_t a = now(c), t0 = rdtsc();
    while (now(c) == a)
        if (rdtsc() - t0 > bound_tsc(PROBE_US))
            return false;
    return true;
}

const char *refclock_name(enum refclock_kind k)
{
    return k < REFCLOCK_COUNT ? clocks[k].name : "none";
}

/* One reading of the reference clock paired with the TSC. The pair is
 * bracketed by two TSC reads and the tightest of several tries is kept: a
 * reading delayed by an SMI, a host preemption or a slow I/O exit would
 * otherwise skew the result. */
struct pair {
    uint64_t tsc, ref;
};

static struct pair sample(const struct clock *c)
{
    struct pair best = { 0, 0 };
    uint64_t width = ~0ull;
    for (int i = 0; i < PAIR_TRIES; i++) {
        uint64_t a = rdtsc(), r = now(c), b = rdtsc();
        if (b - a < width) {
            width = b - a;
            best = (struct pair){ a + (b - a) / 2, r };
        }
    }
    return best;
}

uint64_t refclock_tsc_rate(enum refclock_kind k, uint32_t us)
{
    if (k >= REFCLOCK_COUNT)
        return 0;
    const struct clock *c = &clocks[k];
    uint64_t want = tscmath_ticks_in_us(us, c->num, c->den);
    struct pair p0 = sample(c), p1;
    uint64_t t0 = rdtsc();
    while (tscmath_elapsed(p0.ref, now(c), c->bits) < want)
        if (rdtsc() - t0 > bound_tsc(us * WINDOW_SLACK))
            return 0;
    p1 = sample(c);
    return tscmath_rate(p1.tsc - p0.tsc, tscmath_elapsed(p0.ref, p1.ref, c->bits), c->num, c->den);
}
