/* tscmath.c — TSC rate arithmetic (see tscmath.h). */
#include "time/tscmath.h"

#define US_PER_S 1000000ull

/* a * b / c and its remainder; false when c is 0 or the quotient does not
 * fit in 64 bits. One DIV instruction: no libgcc 128-bit division. */
static bool muldiv_rem(uint64_t a, uint64_t b, uint64_t c, uint64_t *q, uint64_t *r)
{
    unsigned __int128 p = (unsigned __int128)a * b;
    if (c == 0 || (uint64_t)(p >> 64) >= c)
        return false;
    __asm__("divq %4" : "=a"(*q), "=d"(*r) : "a"((uint64_t)p), "d"((uint64_t)(p >> 64)), "rm"(c));
    return true;
}

uint64_t tscmath_muldiv(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t q, r;
    return muldiv_rem(a, b, c, &q, &r) ? q : UINT64_MAX;
}

uint64_t tscmath_elapsed(uint64_t from, uint64_t to, unsigned bits)
{
    uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    return (to - from) & mask;
}

uint64_t tscmath_rate(uint64_t tsc_ticks, uint64_t ref_ticks, uint64_t ref_num, uint64_t ref_den)
{
    if (!ref_ticks || !ref_den)
        return 0;
    /* tsc / (ref_ticks / (num/den)) = tsc * num / (ref_ticks * den) */
    uint64_t divisor = tscmath_muldiv(ref_ticks, ref_den, 1);
    uint64_t hz = divisor == UINT64_MAX ? 0 : tscmath_muldiv(tsc_ticks, ref_num, divisor);
    return hz == UINT64_MAX ? 0 : hz;
}

static uint64_t ceil_muldiv(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t q, r;
    if (!muldiv_rem(a, b, c, &q, &r))
        return UINT64_MAX;
    return q + (r != 0);
}

uint64_t tscmath_ticks_in_us(uint64_t us, uint64_t ref_num, uint64_t ref_den)
{
    return ref_den ? ceil_muldiv(us, ref_num, US_PER_S * ref_den) : 0;
}

uint64_t tscmath_cpuid15(uint32_t eax, uint32_t ebx, uint32_t ecx, uint32_t base_mhz)
{
    if (!eax || !ebx)
        return 0;                      /* the ratio is not enumerated */
    if (ecx)
        return tscmath_muldiv(ecx, ebx, eax);
    return (uint64_t)base_mhz * US_PER_S;
}

uint64_t tscmath_hypervisor(uint32_t eax_khz)
{
    return (uint64_t)eax_khz * 1000;
}

uint64_t tscmath_diff_ppm(uint64_t a, uint64_t b)
{
    if (!b)
        return UINT64_MAX;
    return tscmath_muldiv(a > b ? a - b : b - a, US_PER_S, b);
}

bool tscmath_agree(uint64_t a, uint64_t b)
{
    return tscmath_diff_ppm(a, b) <= TSC_AGREE_PPM;
}

bool tscmath_plausible(uint64_t hz)
{
    return hz >= TSC_MIN_PLAUSIBLE && hz <= TSC_MAX_PLAUSIBLE;
}

enum tsc_verdict tscmath_verdict(uint64_t claimed, uint64_t measured)
{
    uint64_t ppm = tscmath_diff_ppm(claimed, measured);
    return ppm <= TSC_AGREE_PPM ? TSC_CONFIRMED : ppm <= TSC_REFUTE_PPM ? TSC_DIFFERS
                                                                        : TSC_REFUTED;
}

bool tscmath_window(struct tsc_windows *w, uint64_t rate)
{
    w->tried++;
    if (!rate) {
        w->overran++;
        return false;
    }
    if (tscmath_plausible(rate)) {
        w->good++;
        return true;
    }
    if (rate < TSC_MIN_PLAUSIBLE)
        w->slow++;
    else
        w->fast++;
    if (!w->low || rate < w->low)
        w->low = rate;
    if (rate > w->high)
        w->high = rate;
    return false;
}

const char *tscmath_windows_why(const struct tsc_windows *w)
{
    unsigned bad = w->tried - w->good;
    if (bad && w->slow == bad)
        return "each measured the TSC under 50 MHz, the least this kernel accepts";
    if (bad && w->fast == bad)
        return "each measured the TSC over 20 GHz, the most this kernel accepts";
    if (bad && w->overran == bad)
        return "each overran (the clock stalled, or this CPU was held up)";
    return "some overran, some measured the TSC outside 50 MHz-20 GHz";
}
