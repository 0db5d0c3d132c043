/* tscmath.h — the arithmetic of TSC frequencies, apart from the hardware
 * (pure code, tested on the host: test/unit/test_tscmath.c).
 *
 * Every rate is TSC ticks over a window of a reference clock whose own
 * rate is known exactly: the HPET by its period in femtoseconds (its
 * capabilities register), the ACPI PM timer at 3.579545 MHz (ACPI 6.5
 * §4.8.3.3), the PIT at a third of that (1.193182 MHz). Products are taken
 * in 128 bits, so no window length or rate overflows. */
#ifndef TIME_TSCMATH_H
#define TIME_TSCMATH_H
#include <stdbool.h>
#include <stdint.h>

#define PM_TIMER_HZ       3579545ull      /* ACPI PM timer */
#define PIT_HZ_NUM        3579545ull      /* PIT: 3579545 / 3 Hz */
#define PIT_HZ_DEN        3ull
#define FS_PER_S          1000000000000000ull
#define TSC_AGREE_PPM     5000            /* 0.5 %: sources that differ more disagree */
#define TSC_REFUTE_PPM    20000           /* 2 %: a measurement this far off refutes a claim */
#define TSC_MIN_PLAUSIBLE 50000000ull     /* 50 MHz */
#define TSC_MAX_PLAUSIBLE 20000000000ull  /* 20 GHz */

/* a * b / c without overflow; UINT64_MAX when c is 0 or the result does
 * not fit in 64 bits. */
uint64_t tscmath_muldiv(uint64_t a, uint64_t b, uint64_t c);

/* Ticks a counter `bits` wide (24, 32 or 64) advanced from `from` to
 * `to`, across at most one wrap. */
uint64_t tscmath_elapsed(uint64_t from, uint64_t to, unsigned bits);

/* A reference clock runs at ref_num/ref_den Hz: PM timer PM_TIMER_HZ/1,
 * PIT PIT_HZ_NUM/PIT_HZ_DEN, HPET FS_PER_S/(its period in fs). */
/* TSC Hz from tsc_ticks over ref_ticks of that clock; 0 when ref_ticks is
 * 0 or the result does not fit. */
uint64_t tscmath_rate(uint64_t tsc_ticks, uint64_t ref_ticks, uint64_t ref_num, uint64_t ref_den);
/* Reference ticks in `us` microseconds (rounded up, so a window is never
 * shorter than asked). */
uint64_t tscmath_ticks_in_us(uint64_t us, uint64_t ref_num, uint64_t ref_den);

/* CPUID leaf 0x15 (EAX denominator, EBX numerator, ECX crystal Hz) and
 * leaf 0x16 EAX (base MHz, 0 when absent): TSC Hz, or 0 when they do not
 * determine it. A zero crystal is derived from the base frequency, as the
 * SDM describes (TSC = crystal * EBX / EAX, so the base frequency is the
 * TSC frequency). */
uint64_t tscmath_cpuid15(uint32_t eax, uint32_t ebx, uint32_t ecx, uint32_t base_mhz);
/* The hypervisor timing leaf 0x40000010 EAX: TSC kHz. */
uint64_t tscmath_hypervisor(uint32_t eax_khz);

/* |a - b| relative to b, in parts per million (b = 0: UINT64_MAX). */
uint64_t tscmath_diff_ppm(uint64_t a, uint64_t b);
/* a and b within TSC_AGREE_PPM of each other. */
bool tscmath_agree(uint64_t a, uint64_t b);
/* A rate any x86 TSC could have: a broken clock gives absurd ones. */
bool tscmath_plausible(uint64_t hz);

/* The calibration windows tried against one clock, good and failed: a
 * window that returned 0 overran (the clock stalled, or the CPU was held
 * up past twice its length); one whose rate is not tscmath_plausible was
 * slow (under TSC_MIN_PLAUSIBLE) or fast (over TSC_MAX_PLAUSIBLE). */
struct tsc_windows {
    unsigned tried, good, overran, slow, fast;
    uint64_t low, high;                 /* the extreme implausible rates seen */
};
/* Count one window's rate (0: it overran); true when it is good. */
bool tscmath_window(struct tsc_windows *w, uint64_t rate);
/* Why the failed windows failed, in words (a TSC at or under 50 MHz is
 * "under 50 MHz", not a failure of the clock). */
const char *tscmath_windows_why(const struct tsc_windows *w);

/* What a measured rate says of a claimed one (CPUID 15h, the hypervisor
 * leaf): CONFIRMED within TSC_AGREE_PPM; DIFFERS up to TSC_REFUTE_PPM
 * (the claim stays, unconfirmed); REFUTED beyond it: CPUID is wrong on
 * some parts, hypervisors and emulators (Bochs's Tiger Lake says 2.4 GHz
 * of a 50 MHz TSC), and the measurement wins. */
enum tsc_verdict {
    TSC_CONFIRMED,
    TSC_DIFFERS,
    TSC_REFUTED,
};
enum tsc_verdict tscmath_verdict(uint64_t claimed, uint64_t measured);

#endif
