/* c2c.c — the c2c workload: core-to-core cache-line latency, for every
 * pair of CPUs (like core-to-core-latency).
 *
 * Two CPUs bounce one cache line with compare-exchange: the lower-numbered
 * CPU ("ping") turns an even value odd, the other ("pong") turns it even
 * again, each spinning on its compare-exchange until it succeeds. A sample
 * is `trips` round trips timed on the ping CPU; the cell is the median
 * sample, recorded as C2C_RTT(other, median round-trip ticks) on the ping
 * CPU. One-way latency is half of it (what the summary prints). */
#include "arch/cpu.h"
#include "lib/kprintf.h"
#include "lib/median.h"
#include "perf/matrix.h"
#include "perf/spinwait.h"
#include "perf/workload.h"
#include "time/tsc.h"
#include "trace/trace.h"

#define MAX_SAMPLES      256
#define START_TIMEOUT_US 5000000    /* the partner may be a starved emulated CPU */
#define TRIP_TIMEOUT_US  2000000    /* one handover: generous, an emulated or preempted CPU can stall long */
#define PAIR_BUDGET_US   30000000   /* one pair, all samples: then it gives up */
#define PAIR_TRIES       3

static const struct wl_param params[] = {
    { "samples", "", 16, 1, MAX_SAMPLES, false },
    { "trips", "", 100, 1, 100000, false },
    { "cpus", "", 0, 0, 0, true },
    { NULL, NULL, 0, 0, 0, false },
};

static struct {
    uint64_t v;
} __attribute__((aligned(64))) line, ready, stop;
static uint32_t peer;
static uint32_t cpu_at, peer_at, n; /* places in list[] of the pair, its length */
static uint32_t list[MAX_CPUS];     /* the CPUs measured (matrix.h) */
static uint64_t pair_deadline;      /* TSC: both sides give up here */
static uint64_t nsamples, trips;
static uint64_t sample[MAX_SAMPLES];
static int64_t *cells;             /* n x n, by place in list[] */

/* Compare-exchange `from` -> `from + 1` until it works; false on timeout. */
static bool handover(uint64_t from, uint64_t timeout_tsc)
{
    uint64_t t0 = rdtsc();
    for (unsigned i = 1;; i++) {
        uint64_t expect = from;
        if (__atomic_compare_exchange_n(&line.v, &expect, from + 1, false,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return true;
        if (i % SPIN_CHECK_EVERY == 0) {
            uint64_t now = rdtsc();
            if (now - t0 >= timeout_tsc || now >= pair_deadline ||
                __atomic_load_n(&stop.v, __ATOMIC_ACQUIRE))
                return false;
        }
    }
}

static void pong(uint32_t cpu, void *arg)
{
    (void)cpu, (void)arg;
    uint64_t timeout = tsc_from_us(START_TIMEOUT_US);
    __atomic_store_n(&ready.v, 1, __ATOMIC_RELEASE);
    for (uint64_t odd = 1; handover(odd, timeout); odd += 2)
        timeout = tsc_from_us(TRIP_TIMEOUT_US);
}

static void ping(uint32_t cpu, void *arg)
{
    (void)cpu, (void)arg;
    uint64_t timeout = tsc_from_us(TRIP_TIMEOUT_US), even = 0;
    unsigned got = 0;
    if (!spin_until_eq(&ready.v, 1, tsc_from_us(START_TIMEOUT_US)))
        goto out;
    for (uint64_t s = 0; s < nsamples; s++) {
        uint64_t t0 = rdtsc();
        for (uint64_t r = 0; r < trips; r++, even += 2)
            if (!handover(even, timeout))
                goto out;
        if (!spin_until_eq(&line.v, even, timeout))     /* the last pong */
            goto out;
        sample[got++] = (rdtsc_after_loads() - t0) / trips;
    }
out:
    __atomic_store_n(&stop.v, 1, __ATOMIC_RELEASE);
    if (got == nsamples) {
        uint64_t m = median_u64(sample, got);
        cells[cpu_at * n + peer_at] = cells[peer_at * n + cpu_at] = (int64_t)(m / 2);
        trace(C2C_RTT, peer, m);
    }
}

static void run(const uint64_t *v)
{
    nsamples = v[0];
    trips = v[1];
    uint32_t failed = 0;
    uint64_t timeout = tsc_from_us(PAIR_BUDGET_US + START_TIMEOUT_US);
    n = matrix_pick("c2c", workload_cpus(), v[2], list);
    if (n < 2 || !(cells = matrix_cells(0, n))) {
        kprintf("c2c: fewer than 2 CPUs to measure; nothing measured\n");
        return;
    }
    matrix_begin("c2c", (uint64_t)n * (n - 1) / 2);
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = a + 1; b < n; b++) {
            /* More tries when one timed out: a preempted (virtual) CPU
             * can stall a handover. A CPU that did not even take its job
             * is no longer usable, so it costs no more tries. */
            for (unsigned t = 0; t < PAIR_TRIES && cells[a * n + b] == MATRIX_NONE &&
                                 oncpu_usable(list[a]) && oncpu_usable(list[b]);
                 t++) {
                peer = list[b], cpu_at = a, peer_at = b;
                line.v = ready.v = stop.v = 0;
                pair_deadline = rdtsc() + tsc_from_us(PAIR_BUDGET_US);
                oncpu_pair(list[a], ping, list[b], pong, NULL, timeout);
            }
            failed += cells[a * n + b] == MATRIX_NONE;
            matrix_pair_done();
        }
    matrix_print("c2c: one-way cache-line latency (median round trip / 2)", cells, list, n);
    if (failed)
        kprintf("c2c: %u pairs not measured (a CPU did not answer, or handovers timed out "
                "on every try)\n",
                failed);
}

const struct workload wl_c2c = { .params = params, .run = run };
