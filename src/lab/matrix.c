/* matrix.c — see matrix.h. */
#include "lab/matrix.h"
#include "lib/kprintf.h"
#include "lib/format.h"
#include "lab/workload.h"

#define CELL_WIDTH 7
#define ROW_MAX    512                 /* kprintf's line limit */

static void print_table(const int64_t *cells, uint32_t n, bool ns)
{
    char row[ROW_MAX];
    size_t at = (size_t)ksnprintf(row, sizeof row, "%5s", ns ? "ns" : "ticks");
    for (uint32_t c = 0; c < n && at < sizeof row; c++)
        at += (size_t)ksnprintf(row + at, sizeof row - at, " %*u", CELL_WIDTH - 1, c);
    kprintf("%s\n", row);
    for (uint32_t r = 0; r < n; r++) {
        at = (size_t)ksnprintf(row, sizeof row, "%5u", r);
        for (uint32_t c = 0; c < n && at < sizeof row; c++) {
            int64_t v = cells[r * MAX_CPUS + c];
            if (v == MATRIX_NONE)
                at += (size_t)ksnprintf(row + at, sizeof row - at, " %*s", CELL_WIDTH - 1, "-");
            else
                at += (size_t)ksnprintf(row + at, sizeof row - at, " %*ld", CELL_WIDTH - 1,
                                        ns ? workload_ns(v) : v);
        }
        kprintf("%s\n", row);
    }
}

void matrix_print(const char *title, const int64_t *cells, uint32_t n)
{
    kprintf("%s (row = from, column = to)\n", title);
    print_table(cells, n, false);
    print_table(cells, n, true);
}
