/* cpusum.h — a per-CPU table too long for the screen, as one summary.
 *
 * Past CPUSUM_TABLE_MAX CPUs a row per CPU would scroll off the screen
 * (256 CPUs, 256 rows). Instead, per column: the total over the CPUs
 * (where a sum means something), the min, median and max, and the
 * CPUSUM_WORST CPUs with the highest values, by number (none when every
 * CPU has the same value). `s` and the workloads' per-CPU results use it;
 * `S` and the dump keep every CPU's numbers. Pure code, tested on the
 * host (test/unit/test_cpusum.c).
 *
 *     cpusum_begin(cols, 3);
 *     for each CPU: cpusum_add(cpu, (int64_t[]){ a, b, c });
 *     cpusum_print(out);          // a header, then a line per column */
#ifndef PERF_CPUSUM_H
#define PERF_CPUSUM_H
#include <stdbool.h>
#include <stdint.h>

#define CPUSUM_TABLE_MAX    24     /* more CPUs than this: the summary, not the table */
#define CPUSUM_MAX_COLS     8
#define CPUSUM_WORST        3
#define CPUSUM_LINE         160    /* the longest line cpusum_print passes on */
#define CPUSUM_ABSENT_NAMED 16  /* absent CPUs named by number */

struct cpusum_col {
    const char *name;
    bool total;          /* the sum over the CPUs means something */
};

/* A new summary of `ncols` columns (at most CPUSUM_MAX_COLS; cols must
 * outlive it). */
void cpusum_begin(const struct cpusum_col *cols, unsigned ncols);
/* CPU `cpu`'s values, one per column; CPUs beyond MAX_CPUS are left out. */
void cpusum_add(uint32_t cpu, const int64_t *values);
uint32_t cpusum_cpus(void);
/* A CPU with no values (it did not take part): counted and named in a
 * last line. */
void cpusum_absent(uint32_t cpu);
/* The header line, one line per column and, when a CPU was absent, a line
 * naming the first of them, each (NUL-terminated, no newline) passed to
 * out. */
void cpusum_print(void (*out)(const char *line));

#endif
