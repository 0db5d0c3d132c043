/* test_cpusum.c — a per-CPU table as one summary (src/perf/cpusum.c):
 * totals, min/median/max over the CPUs (signed too), the worst CPUs by
 * number, equal columns, absent CPUs, MAX_CPUS of them. */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "perf/cpusum.h"

#define LINES 16

static char got[LINES][CPUSUM_LINE];
static unsigned nlines;

static void out(const char *line)
{
    if (nlines < LINES)
        snprintf(got[nlines], sizeof got[0], "%s", line);
    nlines++;
}

/* clang-format off */
static const struct cpusum_col cols[] = {
    { "recorded", true }, { "late", false }, { "same", true },
};
/* clang-format on */

/* The fields of a column line: name total min median max, then the rest. */
static int fields(const char *line, char *name, char *total, long *lo, long *med, long *hi,
                  char *worst)
{
    int n = 0;
    worst[0] = '\0';
    sscanf(line, "%31s %31s %ld %ld %ld %n", name, total, lo, med, hi, &n);
    strcpy(worst, line + n);
    return n;
}

static void test_summary(void)
{
    /* 64 CPUs: recorded 100 + cpu; late -5 on CPU 3, 900 on CPU 40 and
     * 41, else 7; same 4 everywhere. */
    cpusum_begin(cols, 3);
    for (uint32_t c = 0; c < 64; c++) {
        int64_t late = c == 3 ? -5 : c == 40 || c == 41 ? 900
                                                        : 7;
        const int64_t v[] = { 100 + (int64_t)c, late, 4 };
        cpusum_add(c, v);
    }
    CHECK_EQ(cpusum_cpus(), 64);
    nlines = 0;
    cpusum_print(out);
    CHECK_EQ(nlines, 4);                          /* header + 3 columns */
    CHECK(strstr(got[0], "total") && strstr(got[0], "median") && strstr(got[0], "worst CPUs"));
    char name[32], total[32], worst[CPUSUM_LINE];
    long lo, med, hi;
    fields(got[1], name, total, &lo, &med, &hi, worst);
    CHECK(!strcmp(name, "recorded") && !strcmp(total, "8416"));   /* 64 * 100 + 2016 */
    CHECK(lo == 100 && med == 131 && hi == 163);                  /* (131 + 132) / 2 */
    CHECK(!strcmp(worst, "cpu63=163 cpu62=162 cpu61=161"));
    fields(got[2], name, total, &lo, &med, &hi, worst);
    CHECK(!strcmp(name, "late") && !strcmp(total, "-"));           /* no total */
    CHECK(lo == -5 && med == 7 && hi == 900);                     /* signed order */
    CHECK(!strcmp(worst, "cpu40=900 cpu41=900 cpu0=7"));         /* ties: lower CPU first */
    fields(got[3], name, total, &lo, &med, &hi, worst);
    CHECK(!strcmp(name, "same") && lo == 4 && med == 4 && hi == 4);
    CHECK(!strcmp(worst, "-"));                                 /* all equal: nobody named */
}

static void test_absent_and_capacity(void)
{
    cpusum_begin(cols, 1);
    for (uint32_t c = 0; c < MAX_CPUS + 5; c++) {
        const int64_t v[] = { 1 };
        cpusum_add(c, v);
    }
    CHECK_EQ(cpusum_cpus(), MAX_CPUS);                          /* the rest left out */
    cpusum_begin(cols, 1);
    for (uint32_t c = 0; c < MAX_CPUS; c++) {
        const int64_t v[] = { (int64_t)c % 3 };
        if (c % 50 == 7)
            cpusum_absent(c);
        else
            cpusum_add(c, v);
    }
    uint32_t absent = 0;
    for (uint32_t c = 0; c < MAX_CPUS; c++)
        absent += c % 50 == 7;
    CHECK_EQ(cpusum_cpus(), MAX_CPUS - absent);
    nlines = 0;
    cpusum_print(out);
    CHECK_EQ(nlines, 3);
    char want[64];
    snprintf(want, sizeof want, "%u CPUs did not take part: 7 57 107", absent);
    CHECK(!strncmp(got[2], want, strlen(want)));
    CHECK(absent <= CPUSUM_ABSENT_NAMED || strstr(got[2], " ..."));
    /* An empty summary prints zeros, not garbage. */
    cpusum_begin(cols, 2);
    nlines = 0;
    cpusum_print(out);
    CHECK_EQ(nlines, 3);
    char name[32], total[32], worst[CPUSUM_LINE];
    long lo = 1, med = 1, hi = 1;
    fields(got[1], name, total, &lo, &med, &hi, worst);
    CHECK(!strcmp(total, "0") && lo == 0 && med == 0 && hi == 0 && !strcmp(worst, "-"));
}

int main(void)
{
    test_summary();
    test_absent_and_capacity();
    return check_summary("test_cpusum");
}
