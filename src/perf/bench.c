/* bench.c — the bench workload: what one trace event costs, in TSC ticks,
 * for our trace point and for the designs it grew from (benchloops.h,
 * baselines.h), on the boot CPU alone and on all CPUs at once, in one
 * boot. Each figure is the smallest over `rounds` of (ticks for n
 * events) / n; with all CPUs, a round's figure is the mean over the CPUs,
 * which start each loop together (oncpu_barrier). Interrupts are off
 * inside a loop, so no tick lands in it and no writer nests.
 *
 * Output: BENCH lines (machine-readable, scripts/bench reads them):
 *   BENCH BEGIN where=kernel cpus=N n=N rounds=N tsc_hz=N
 *   BENCH variant=NAME scope=CPUS ticks=T.TTT x_rdtsc=R.RR [drops=N]
 *   BENCH END
 * x_rdtsc is the figure over bare RDTSC's in the same scope. The trace-
 * point variants write into the real rings: they overwrite what was
 * there with BENCH events. Under QEMU's TCG these are emulation costs:
 * compare ratios, and see the host figures `make bench` adds. */
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "lib/median.h"
#include "mm/mem.h"
#include "perf/benchloops.h"
#include "perf/workload.h"
#include "time/tsc.h"
#include "trace/trace.h"

#define MAX_ROUNDS      15
#define BASELINE_EVENTS 4096          /* per-CPU baseline ring, as the default ring */
#define GLOBAL_EVENTS   65536
#define BARRIER_US      2000000
#define SCOPES          2             /* the boot CPU alone; all CPUs */

static const struct wl_param params[] = {
    { "n", "", 20000, 1000, 100000000, false },
    { "rounds", "", 5, 1, MAX_ROUNDS, false },
    { NULL, NULL, 0, 0, 0, false },
};

static struct bench_cpu *bcpu;          /* [slots]: sized at the first run */
static struct bl_global_ring global;
static bool have_rings;
static uint64_t n_events, rounds;
static uint32_t saved_mask;
/* ticks[variant][scope][round][cpu] for n events, as one block of
 * BV_COUNT * SCOPES * MAX_ROUNDS * slots counters */
static uint64_t *ticks;
static uint32_t slots;
#define TICKS(v, scope, r, c) ticks[(((uint64_t)(v) * SCOPES + (scope)) * MAX_ROUNDS + (r)) * slots + (c)]

/* Baseline rings, once per boot (the allocator never frees). */
static bool alloc_rings(void)
{
    if (have_rings)
        return true;
    slots = oncpu_slots();
    bcpu = mem_alloc((uint64_t)slots * sizeof *bcpu, 64);
    ticks = mem_alloc((uint64_t)BV_COUNT * SCOPES * MAX_ROUNDS * slots * sizeof *ticks, 64);
    if (!bcpu || !ticks)
        return false;
    for (uint32_t c = 0; c < slots; c++) {
        struct trace_event *s = mem_alloc(BASELINE_EVENTS * sizeof *s, 64);
        struct bl_wide_entry *w = mem_alloc(BASELINE_EVENTS * sizeof *w, 64);
        if (!s || !w)
            return false;
        bl_spin_init(&bcpu[c].spin, s, BASELINE_EVENTS, c);
        bl_spin_init(&bcpu[c].strat9, s, BASELINE_EVENTS, c);   /* one runs at a time */
        bl_wide_init(&bcpu[c].wide, w, BASELINE_EVENTS, c);
    }
    struct trace_event *g = mem_alloc(GLOBAL_EVENTS * sizeof *g, 64);
    if (!g)
        return false;
    bl_global_init(&global, g, GLOBAL_EVENTS);
    return have_rings = true;
}

static uint64_t timed(enum bench_variant v, uint32_t cpu)
{
    uint64_t irq = irq_save();
    uint64_t t = bench_loop(v, &bcpu[cpu], &global, n_events);
    irq_restore(irq);
    return t;
}

/* The variants take turns within each round, so that a disturbance (an
 * emulator's host, an SMI) hits them all alike. */
static void one_cpu(void)
{
    for (uint64_t r = 0; r < rounds; r++)
        for (unsigned v = 0; v < BV_COUNT; v++) {
            trace_set_mask(bench_mask(v, saved_mask));
            TICKS(v, 0, r, 0) = timed(v, 0);
        }
    trace_set_mask(saved_mask);
}

static void all_cpus(uint32_t cpu, void *arg)
{
    (void)arg;
    uint64_t limit = tsc_from_us(BARRIER_US);
    for (uint64_t r = 0; r < rounds; r++)
        for (unsigned v = 0; v < BV_COUNT; v++) {
            oncpu_barrier(limit);
            if (cpu == 0)
                trace_set_mask(bench_mask(v, saved_mask));
            oncpu_barrier(limit);      /* the mask is set: start together */
            TICKS(v, 1, r, cpu) = timed(v, cpu);
        }
    oncpu_barrier(limit);
    if (cpu == 0)
        trace_set_mask(saved_mask);
}

/* The scope's figure, ticks per event x 1000: per round the mean over the
 * CPUs, then the smallest over the rounds (noise only ever adds time). */
static uint64_t figure(unsigned v, unsigned scope, const bool *ran)
{
    uint64_t per_round[MAX_ROUNDS];
    for (uint64_t r = 0; r < rounds; r++) {
        uint64_t sum = 0, cpus = 0;
        for (uint32_t c = 0; c < (scope ? oncpu_slots() : 1); c++)
            if (!scope || ran[c]) {
                sum += TICKS(v, scope, r, c);
                cpus++;
            }
        per_round[r] = cpus ? sum * 1000 / cpus / n_events : 0;
    }
    return min_u64(per_round, (unsigned)rounds);
}

static void print(unsigned scope, uint32_t cpus, const bool *ran)
{
    uint64_t floor = figure(BV_RDTSC, scope, ran);
    for (unsigned v = 0; v < BV_COUNT; v++) {
        uint64_t f = figure(v, scope, ran), x = floor ? f * 100 / floor : 0;
        char drops[32] = "";
        if (v == BV_SPIN) {
            uint64_t d = 0;
            for (uint32_t c = 0; c < oncpu_slots(); c++)
                d += bcpu[c].spin.drops;
            ksnprintf(drops, sizeof drops, " drops=%lu", d);
        }
        kprintf("BENCH variant=%s scope=%u ticks=%lu.%03lu x_rdtsc=%lu.%02lu%s\n",
                bench_variants[v].name, cpus, f / 1000, f % 1000, x / 100, x % 100, drops);
    }
}

static void run(const uint64_t *v)
{
    n_events = v[0];
    rounds = v[1];
    if (!alloc_rings()) {
        kprintf("bench: no memory for the baseline rings and counters; not run\n");
        return;
    }
    saved_mask = trace_get_mask();
    bool ran[MAX_CPUS];
    one_cpu();
    uint32_t cpus = workload_all(all_cpus, NULL, tsc_from_us(60000000 + BARRIER_US * BV_COUNT * (rounds + 1)), ran);
    trace_set_mask(saved_mask);
    kprintf("BENCH BEGIN where=kernel cpus=%u n=%lu rounds=%lu tsc_hz=%lu\n", cpus, n_events,
            rounds, tsc_hz());
    print(0, 1, ran);
    print(1, cpus, ran);
    kprintf("BENCH END\n");
}

const struct workload wl_bench = { .params = params, .run = run };
