/* matrix.h — a CPU x CPU table of TSC-tick values on the console, for the
 * ipi, c2c and tsc workloads. Rows and columns are CPU numbers; the cell
 * [row][col] sits at cells[row * MAX_CPUS + col]. */
#ifndef PERF_MATRIX_H
#define PERF_MATRIX_H
#include <stdint.h>

#define MATRIX_NONE INT64_MIN          /* a cell not measured: printed "-" */

/* Prints `title`, then the n x n matrix twice: in TSC ticks and in ns. */
void matrix_print(const char *title, const int64_t *cells, uint32_t n);

#endif
