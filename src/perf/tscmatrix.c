/* tscmatrix.c — the tsc workload: cross-CPU TSC offsets, for every pair.
 *
 * Two CPUs take turns publishing their TSC in a shared cache line (TSC,
 * then a turn number) and reading it on the other side right after seeing
 * the turn change. On the reader, delta = own TSC - published TSC =
 * (reader's offset - writer's offset) + the line's transfer time, so its
 * minimum over `rounds` is the tightest bound: the cell (writer, reader).
 * A negative cell means the reader saw the writer's time after its own
 * was already past: a warp, events of these CPUs can mis-order by that
 * much. Each CPU records TSC_DELTA(writer, min delta) for what it read.
 * From both directions: offset(reader vs writer) = (d[w][r] - d[r][w]) / 2,
 * exact within +-(d[w][r] + d[r][w]) / 2 (half the round trip). */
#include "arch/cpu.h"
#include "lib/kprintf.h"
#include "perf/matrix.h"
#include "perf/spinwait.h"
#include "perf/workload.h"
#include "time/tsc.h"
#include "trace/trace.h"

#define START_TIMEOUT_US 5000000    /* the partner may be a starved emulated CPU */
#define TURN_TIMEOUT_US  2000000    /* one turn: generous, an emulated or preempted CPU can stall long */
#define PAIR_BUDGET_US   30000000   /* one pair, all rounds: then it gives up */
#define PAIR_TRIES       3

static const struct wl_param params[] = {
    { "rounds", "", 200, 1, 100000, false },
    { "cpus", "", 0, 0, 0, true },
    { NULL, NULL, 0, 0, 0, false },
};

static struct {
    uint64_t tsc, turn;
} __attribute__((aligned(64))) line;
static uint64_t rounds;
static uint64_t pair_deadline;      /* TSC: both sides give up here */
static int64_t *delta, *offset;     /* n x n, by place in list[] */
static uint32_t list[MAX_CPUS];     /* the CPUs measured (matrix.h) */
static uint32_t n;

/* Turns 0, 1, 2, ...: side A publishes on even turns, B on odd ones. On
 * its turn t a side first reads what the other published on turn t - 1,
 * then publishes (its TSC, then turn t + 1: stores stay in order). A
 * takes the last turn, 2 * rounds, only to read: `rounds` reads each. */
static void side(uint32_t other, uint32_t me_at, uint32_t other_at, bool first)
{
    int64_t best = INT64_MAX;
    uint64_t timeout = tsc_from_us(START_TIMEOUT_US);
    for (uint64_t t = first ? 0 : 1; t <= 2 * rounds; t += 2) {
        if (!spin_until_eq(&line.turn, t, timeout) || rdtsc() >= pair_deadline)
            break;
        timeout = tsc_from_us(TURN_TIMEOUT_US);
        if (t > 0) {
            uint64_t now = rdtsc_after_loads();
            int64_t d = (int64_t)(now - __atomic_load_n(&line.tsc, __ATOMIC_RELAXED));
            if (d < best)
                best = d;
        }
        if (t == 2 * rounds)
            break;
        __atomic_store_n(&line.tsc, rdtsc_after_loads(), __ATOMIC_RELAXED);
        __atomic_store_n(&line.turn, t + 1, __ATOMIC_RELEASE);
    }
    if (best != INT64_MAX) {
        delta[other_at * n + me_at] = best;
        trace(TSC_DELTA, other, (uint64_t)best);
    }
}

static uint32_t a_cpu, b_cpu, a_at, b_at;

static void side_a(uint32_t cpu, void *arg)
{
    (void)arg;
    (void)cpu;
    side(b_cpu, a_at, b_at, true);
}
static void side_b(uint32_t cpu, void *arg)
{
    (void)arg;
    (void)cpu;
    side(a_cpu, b_at, a_at, false);
}

static bool missing(uint32_t a, uint32_t b)
{
    return delta[a * n + b] == MATRIX_NONE || delta[b * n + a] == MATRIX_NONE;
}

static void run(const uint64_t *v)
{
    rounds = v[0];
    uint32_t failed = 0;
    uint64_t timeout = tsc_from_us(PAIR_BUDGET_US + 2 * TURN_TIMEOUT_US);
    n = matrix_pick("tsc", workload_cpus(), v[1], list);
    if (n < 2 || !(delta = matrix_cells(0, n)) || !(offset = matrix_cells(1, n))) {
        kprintf("tsc: fewer than 2 CPUs to measure; nothing measured\n");
        return;
    }
    matrix_begin("tsc", (uint64_t)n * (n - 1) / 2);
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = a + 1; b < n; b++) {
            /* More tries when one timed out (see c2c.c). */
            for (unsigned t = 0; t < PAIR_TRIES && missing(a, b) && oncpu_usable(list[a]) &&
                                 oncpu_usable(list[b]);
                 t++) {
                a_cpu = list[a], b_cpu = list[b], a_at = a, b_at = b;
                line.tsc = line.turn = 0;
                pair_deadline = rdtsc() + tsc_from_us(PAIR_BUDGET_US);
                oncpu_pair(a_cpu, side_a, b_cpu, side_b, NULL, timeout);
            }
            failed += missing(a, b);
            matrix_pair_done();
        }
    int64_t worst = INT64_MAX, bound = 0;
    uint32_t worst_w = 0, worst_r = 0;
    for (uint32_t w = 0; w < n; w++)
        for (uint32_t r = 0; r < n; r++) {
            int64_t d = delta[w * n + r], back = delta[r * n + w];
            if (w == r || d == MATRIX_NONE || back == MATRIX_NONE)
                continue;
            offset[w * n + r] = (d - back) / 2;
            if ((d + back) / 2 > bound)
                bound = (d + back) / 2;
            if (d < worst)
                worst = d, worst_w = list[w], worst_r = list[r];
        }
    matrix_print("tsc: TSC offset of the column CPU against the row CPU", offset, list, n);
    if (worst != INT64_MAX)
        kprintf("tsc: smallest one-way delta %ld ticks (%ld ns), CPU %u -> CPU %u%s; offsets "
                "exact within +-%ld ticks\n",
                worst, workload_ns(worst), worst_w, worst_r,
                worst < 0 ? ": a WARP, the reader's TSC is behind" : " (no warp seen)", bound);
    if (failed)
        kprintf("tsc: %u pairs not measured (a CPU did not answer)\n", failed);
}

const struct workload wl_tsc = { .params = params, .run = run };
