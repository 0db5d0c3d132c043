/* matrix.c — see matrix.h. */
#include "perf/matrix.h"
#include "arch/cpu.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "mm/mem.h"
#include "perf/oncpu.h"
#include "perf/wlrun.h"
#include "time/tsc.h"

#define CELL_WIDTH  7
#define LABEL_WIDTH 5
#define SCREEN_COLS 80
#define BLOCK_COLS  ((SCREEN_COLS - LABEL_WIDTH) / CELL_WIDTH)   /* 10 cells a line */
#define ROW_MAX     (LABEL_WIDTH + BLOCK_COLS * CELL_WIDTH + 1)
#define PROGRESS_US 5000000            /* a progress line at most this often */

static int64_t *tables[MATRIX_TABLES];
static uint32_t table_cap;              /* CPUs each table has room for */

/* The usable CPUs a cpus= list names, into list (when not NULL). */
static uint32_t listed(const struct wl_cpus *given, uint32_t *list)
{
    uint32_t n = 0;
    for (uint32_t c = 0; c < oncpu_slots(); c++)
        if (wl_cpus_has(given, c) && oncpu_usable(c)) {
            if (list)
                list[n] = c;
            n++;
        }
    return n;
}

static uint32_t usable_cpus(void)
{
    uint32_t usable = 0;
    for (uint32_t c = 0; c < oncpu_slots(); c++)
        usable += oncpu_usable(c);
    return usable;
}

uint32_t matrix_count(const struct wl_cpus *given, uint64_t given_count)
{
    if (given_count)
        return listed(given, NULL);
    uint32_t usable = usable_cpus();
    return usable < MATRIX_DEFAULT_CPUS ? usable : MATRIX_DEFAULT_CPUS;
}

uint32_t matrix_pick(const char *name, const struct wl_cpus *given, uint64_t given_count,
                     uint32_t *list)
{
    uint32_t slots = oncpu_slots(), usable = usable_cpus(), n = 0;
    if (given_count) {
        n = listed(given, list);
        if (n < given_count)
            kprintf("%s: cpus= names %lu CPUs, %u of them online and usable\n", name,
                    given_count, n);
        return n;
    }
    /* Every usable CPU, or MATRIX_DEFAULT_CPUS of them at even steps
     * through the usable ones (0 first): both ends of the machine. */
    uint32_t want = usable < MATRIX_DEFAULT_CPUS ? usable : MATRIX_DEFAULT_CPUS, seen = 0;
    for (uint32_t c = 0; c < slots && n < want; c++) {
        if (!oncpu_usable(c))
            continue;
        if ((uint64_t)seen * want / usable == n || usable == want)
            list[n++] = c;
        seen++;
    }
    if (want < usable) {
        char names[96];
        size_t at = 0;
        for (uint32_t i = 0; i < n; i++)
            at = kappendf(names, sizeof names, at, "%s%u", i ? "," : "", list[i]);
        kprintf("%s: %u of %u CPUs by default, spread over the machine (%s); cpus=LIST "
                "(e.g. %s:cpus=0-15) measures others\n",
                name, n, usable, names, name);
    }
    return n;
}

int64_t *matrix_cells(unsigned which, uint32_t n)
{
    if (!table_cap) {
        /* Once, for the largest matrix this boot can ask for: the
         * allocator never frees. */
        uint32_t cap = oncpu_slots();
        for (unsigned t = 0; t < MATRIX_TABLES; t++)
            tables[t] = mem_alloc((uint64_t)cap * cap * sizeof(int64_t), 64);
        bool ok = true;
        for (unsigned t = 0; t < MATRIX_TABLES; t++)
            ok = ok && tables[t];
        table_cap = ok ? cap : 0;
        if (!ok)
            kprintf("workload: no memory for %u x %u matrices (%lu KiB); not run\n", cap, cap,
                    (uint64_t)cap * cap * sizeof(int64_t) * MATRIX_TABLES / 1024);
    }
    if (which >= MATRIX_TABLES || n > table_cap)
        return NULL;
    for (uint64_t i = 0; i < (uint64_t)n * n; i++)
        tables[which][i] = MATRIX_NONE;
    return tables[which];
}

static struct {
    const char *name;
    uint64_t pairs, done, t0, last;
} pace;

void matrix_begin(const char *name, uint64_t pairs)
{
    pace.name = name;
    pace.pairs = pairs;
    pace.done = 0;
    pace.t0 = pace.last = rdtsc();
    kprintf("%s: %lu pairs to measure\n", name, pairs);
}

void matrix_pair_done(void)
{
    uint64_t now = rdtsc(), spent = tsc_to_us(now - pace.t0);
    pace.done++;
    if (pace.done == pace.pairs)
        return;
    uint64_t left = spent / pace.done * (pace.pairs - pace.done);
    if (pace.done == 1 && pace.pairs > 1) {
        kprintf("%s: the first pair took %lu ms: about %lu s for all %lu\n", pace.name,
                spent / 1000, spent * pace.pairs / 1000000, pace.pairs);
        pace.last = now;
    } else if (tsc_to_us(now - pace.last) >= PROGRESS_US) {
        kprintf("%s: %lu of %lu pairs, about %lu s left\n", pace.name, pace.done, pace.pairs,
                left / 1000000);
        pace.last = now;
    }
}

/* v in at most CELL_WIDTH - 1 characters: as it is, or in thousands,
 * millions, ... (k, M, G, T, P, E) when it is wider (an emulated or very
 * slow machine's ticks), so the columns stay apart. */
static void cell_text(char *out, size_t size, int64_t v)
{
    static const char unit[] = "kMGTPE";
    if (ksnprintf(out, size, "%ld", v) <= CELL_WIDTH - 1)
        return;
    for (unsigned u = 0; u < sizeof unit - 1; u++) {
        v /= 1000;
        if (ksnprintf(out, size, "%ld%c", v, unit[u]) <= CELL_WIDTH - 1)
            return;
    }
}

static void print_block(const int64_t *cells, const uint32_t *list, uint32_t n, uint32_t c0,
                        uint32_t c1, bool ns)
{
    char row[ROW_MAX], cell[24];
    size_t at = kappendf(row, sizeof row, 0, "%*s", LABEL_WIDTH, ns ? "ns" : "ticks");
    for (uint32_t c = c0; c < c1; c++)
        at = kappendf(row, sizeof row, at, " %*u", CELL_WIDTH - 1, list[c]);
    kprintf("%s\n", row);
    for (uint32_t r = 0; r < n; r++) {
        at = kappendf(row, sizeof row, 0, "%*u", LABEL_WIDTH, list[r]);
        for (uint32_t c = c0; c < c1; c++) {
            int64_t v = cells[(uint64_t)r * n + c];
            if (v == MATRIX_NONE)
                ksnprintf(cell, sizeof cell, "-");
            else
                cell_text(cell, sizeof cell, ns ? workload_ns(v) : v);
            at = kappendf(row, sizeof row, at, " %*s", CELL_WIDTH - 1, cell);
        }
        kprintf("%s\n", row);
    }
}

static void print_table(const int64_t *cells, const uint32_t *list, uint32_t n, bool ns)
{
    uint32_t blocks = (n + BLOCK_COLS - 1) / BLOCK_COLS;
    for (uint32_t b = 0; b < blocks; b++) {
        uint32_t c0 = b * BLOCK_COLS, c1 = c0 + BLOCK_COLS < n ? c0 + BLOCK_COLS : n;
        if (blocks > 1)
            kprintf("  block %u of %u: columns of CPUs %u to %u\n", b + 1, blocks, list[c0],
                    list[c1 - 1]);
        print_block(cells, list, n, c0, c1, ns);
    }
}

void matrix_print(const char *title, const int64_t *cells, const uint32_t *list, uint32_t n)
{
    kprintf("%s (row = from, column = to)\n", title);
    print_table(cells, list, n, false);
    print_table(cells, list, n, true);
}
