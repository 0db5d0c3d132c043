/* matrix.h — the pair workloads' common parts (ipi, c2c, tsc): which CPUs
 * they measure, their cells, the time they take, and the CPU x CPU table
 * on the console.
 *
 * A matrix workload measures n(n-1) or n(n-1)/2 pairs: minutes on 256
 * CPUs. It measures the CPUs of its cpus= list (wlargs.h), or by default
 * at most MATRIX_DEFAULT_CPUS of the usable ones, spread evenly over the
 * CPU numbers (all of them when there are no more). The cells are indexed
 * by position in that list: cell [row][col] sits at cells[row * n + col]
 * and belongs to CPUs list[row] and list[col]; the trace events carry CPU
 * numbers. */
#ifndef PERF_MATRIX_H
#define PERF_MATRIX_H
#include <stdbool.h>
#include <stdint.h>
#include "perf/wlargs.h"

#define MATRIX_NONE         INT64_MIN          /* a cell not measured: printed "-" */
#define MATRIX_DEFAULT_CPUS 16         /* without cpus=: 120 pairs, 240 ordered */
#define MATRIX_TABLES       2                /* cell tables a workload may use at once */

/* The CPUs to measure: the usable ones of `given` (a cpus= list naming
 * `given_count` CPUs; 0: none given) or the default spread, into list;
 * says on the console which. Returns how many (0: none usable). */
uint32_t matrix_pick(const char *name, const struct wl_cpus *given, uint64_t given_count,
                     uint32_t *list);
/* How many CPUs matrix_pick would measure now (nothing said). */
uint32_t matrix_count(const struct wl_cpus *given, uint64_t given_count);
/* Table `which` (< MATRIX_TABLES) of n x n cells, all MATRIX_NONE, from
 * memory taken once for the largest matrix this machine can have; NULL
 * (said on the console) when memory is short. */
int64_t *matrix_cells(unsigned which, uint32_t n);

/* A run's pace: matrix_begin before the first pair, matrix_pair_done
 * after each. After the first pair it prints an estimate of the whole
 * run (pairs x that pair's time), then progress every few seconds. */
void matrix_begin(const char *name, uint64_t pairs);
void matrix_pair_done(void);

/* Prints `title`, then the n x n matrix twice: in TSC ticks and in ns,
 * each in blocks of columns that fit an 80-column screen; rows and
 * columns are labelled with the CPU numbers of list. */
void matrix_print(const char *title, const int64_t *cells, const uint32_t *list, uint32_t n);

#endif
