/* cpusum.c — see cpusum.h. */
#include "perf/cpusum.h"
#include "lib/format.h"
#include "lib/median.h"

#define SIGN_BIT (1ull << 63)          /* flipped: signed order as unsigned order */

static const struct cpusum_col *cols;
static unsigned ncols;
static uint32_t ncpus;
static int64_t value[CPUSUM_MAX_COLS][MAX_CPUS];   /* by place among the CPUs added */
static uint32_t cpu_of[MAX_CPUS];                  /* that place's CPU number */
static uint64_t sorted[MAX_CPUS];                  /* scratch for a median */
static uint32_t absent, absent_cpu[CPUSUM_ABSENT_NAMED];

void cpusum_begin(const struct cpusum_col *c, unsigned n)
{
    cols = c;
    ncols = n < CPUSUM_MAX_COLS ? n : CPUSUM_MAX_COLS;
    ncpus = absent = 0;
}

void cpusum_absent(uint32_t cpu)
{
    if (absent < CPUSUM_ABSENT_NAMED)
        absent_cpu[absent] = cpu;
    absent++;
}

void cpusum_add(uint32_t cpu, const int64_t *values)
{
    if (ncpus == MAX_CPUS)
        return;
    for (unsigned c = 0; c < ncols; c++)
        value[c][ncpus] = values[c];
    cpu_of[ncpus++] = cpu;
}

uint32_t cpusum_cpus(void) { return ncpus; }

/* The median of column c: sorted as unsigned with the sign bit flipped. */
static int64_t median(unsigned c)
{
    if (!ncpus)
        return 0;
    for (uint32_t i = 0; i < ncpus; i++)
        sorted[i] = (uint64_t)value[c][i] ^ SIGN_BIT;
    return (int64_t)(median_u64(sorted, ncpus) ^ SIGN_BIT);
}

/* The place of the highest value of column c above `floor`, not among
 * picked[0..n); ncpus when none. Ties: the lower CPU first. */
static uint32_t highest(unsigned c, int64_t floor, const uint32_t *picked, unsigned n)
{
    uint32_t best = ncpus;
    for (uint32_t i = 0; i < ncpus; i++) {
        bool used = false;
        for (unsigned k = 0; k < n; k++)
            used |= picked[k] == i;
        if (!used && value[c][i] > floor && (best == ncpus || value[c][i] > value[c][best]))
            best = i;
    }
    return best;
}

static void column(unsigned c, void (*out)(const char *line))
{
    char line[CPUSUM_LINE], total_text[24] = "-";
    int64_t total = 0, lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t i = 0; i < ncpus; i++) {
        total += value[c][i];
        lo = value[c][i] < lo ? value[c][i] : lo;
        hi = value[c][i] > hi ? value[c][i] : hi;
    }
    if (!ncpus)
        lo = hi = 0;
    if (cols[c].total)
        ksnprintf(total_text, sizeof total_text, "%ld", total);
    size_t at = kappendf(line, sizeof line, 0, "%-17s %12s %10ld %10ld %10ld ", cols[c].name,
                         total_text, lo, median(c), hi);
    uint32_t picked[CPUSUM_WORST];
    unsigned named = 0;
    for (; named < CPUSUM_WORST && lo != hi; named++) {
        picked[named] = highest(c, lo, picked, named);
        if (picked[named] == ncpus)
            break;
        at = kappendf(line, sizeof line, at, " cpu%u=%ld", cpu_of[picked[named]],
                      value[c][picked[named]]);
    }
    if (!named)
        kappendf(line, sizeof line, at, " -");
    out(line);
}

void cpusum_print(void (*out)(const char *line))
{
    char line[CPUSUM_LINE];
    ksnprintf(line, sizeof line, "%-17s %12s %10s %10s %10s  worst CPUs", "", "total", "min",
              "median", "max");
    out(line);
    for (unsigned c = 0; c < ncols; c++)
        column(c, out);
    if (!absent)
        return;
    size_t at = kappendf(line, sizeof line, 0, "%u CPUs did not take part:", absent);
    for (uint32_t i = 0; i < absent && i < CPUSUM_ABSENT_NAMED; i++)
        at = kappendf(line, sizeof line, at, " %u", absent_cpu[i]);
    if (absent > CPUSUM_ABSENT_NAMED)
        kappendf(line, sizeof line, at, " ...");
    out(line);
}
