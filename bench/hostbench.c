/* hostbench.c — the trace-cost benchmark on the host's real CPUs.
 *
 * The same loops as the kernel's bench workload (src/perf/benchloops.c),
 * built with -DHOST_BUILD: our trace point on the real ring code (one
 * ring per thread through trace_host_ring), bare RDTSC, the empty loop,
 * and the three baseline designs (src/perf/baselines.h). Run on one
 * thread, then on one thread per CPU at once, each thread pinned to its
 * own CPU. QEMU's TCG distorts instruction costs; these are the figures
 * of real silicon. Interrupts and other processes cannot be kept out
 * here: each figure is the best of `rounds` rounds, since they only ever
 * add time.
 *
 * With a second CPU, one more figure (issue 35): the trace point on one
 * thread while a stream's consumer on another CPU reads that thread's
 * ring behind it with the live read protocol (ring_snap_begin_from),
 * looking once a tick (1 ms; look_us=) as the kernel's keys CPU does, taking a
 * part whenever the kernel's stream would (every 100 ms, or once half the
 * ring has filled: at this rate, at every look). Its rounds alternate
 * with the trace point alone (the consumer asleep, touching nothing), and
 * both are printed (trace_on_alone beside trace_streamed).
 *
 * Usage: build/bench/hostbench [n=EVENTS] [rounds=N] [threads=N] [look_us=N]
 * Prints BENCH lines in the kernel's format (perf/bench.c), where=host:
 *   BENCH BEGIN where=host cpus=N n=N rounds=N tsc_hz=N
 *   BENCH variant=NAME scope=CPUS ticks=T.TTT x_rdtsc=R.RR [drops=N]
 *   BENCH variant=trace_streamed scope=1 ticks=T.TTT x_rdtsc=R.RR read=N look_us=N
 *   BENCH END
 * Exit status 2 on a bad argument, 1 when threads cannot be started. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/median.h"
#include "perf/benchloops.h"
#include "trace/ring.h"
#include "trace/trace.h"

#define MAX_THREADS     256
#define MAX_ROUNDS      31
#define RING_EVENTS     4096         /* as the kernel's default ring */
#define GLOBAL_EVENTS   65536
#define CALIBRATE_NS    100000000L
#define STREAM_PART_NS  100000000u  /* recorder/stream.c: a part every 100 ms at most */
/* The kernel's consumer looks at the rings once per pass of the keys
 * CPU's loop, which waits for the next tick (main.c's idle, stress's
 * KEYS_EVERY_US): every 1 ms at timer_hz=1000, ten times less often at
 * the default 100 Hz. Between two looks it touches no ring. look_us=
 * looks more often: a consumer that reads nearly every event. */
#define LOOK_US_DEFAULT 1000u

struct worker {
    pthread_t thread;
    unsigned index, cpu;
    struct ring ring;
    struct bench_cpu rings;
    uint64_t ticks[BV_COUNT][MAX_ROUNDS];
} __attribute__((aligned(64)));

static struct worker *workers;
static struct bl_global_ring global;
static pthread_barrier_t barrier;
static uint64_t n_events = 1000000, rounds = 11, look_us = LOOK_US_DEFAULT;
static unsigned nthreads;
static uint32_t saved_mask;

static uint64_t now_ns(void);

/* A stream's consumer on its own CPU, reading one ring while `active`. */
struct consumer {
    pthread_t thread;
    unsigned cpu;
    struct ring *ring;
    int active, stop;           /* __atomic: set by the timing thread */
    uint64_t read;              /* events read behind the writer */
};

static void *xalloc(size_t size)
{
    void *p = aligned_alloc(64, (size + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "hostbench: out of memory\n");
        exit(1);
    }
    memset(p, 0, size);
    return p;
}

static void pin(unsigned cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);   /* best effort */
}

/* Every worker runs every variant once per round, the variants taking
 * turns so that a burst of outside load hits them all alike; thread 0
 * sets the mask between two barriers so all threads run one variant at
 * a time. */
static void *work(void *arg)
{
    struct worker *w = arg;
    pin(w->cpu);
    trace_host_ring = &w->ring;
    for (uint64_t r = 0; r < rounds; r++)
        for (unsigned v = 0; v < BV_COUNT; v++) {
            pthread_barrier_wait(&barrier);
            if (w->index == 0)
                trace_set_mask(bench_mask(v, saved_mask));
            pthread_barrier_wait(&barrier);
            w->ticks[v][r] = bench_loop(v, &w->rings, &global, n_events);
        }
    return NULL;
}

static int run(unsigned threads)
{
    if (pthread_barrier_init(&barrier, NULL, threads))
        return -1;
    for (unsigned i = 0; i < threads; i++)
        if (pthread_create(&workers[i].thread, NULL, work, &workers[i]))
            return -1;
    for (unsigned i = 0; i < threads; i++)
        pthread_join(workers[i].thread, NULL);
    pthread_barrier_destroy(&barrier);
    trace_set_mask(saved_mask);
    return 0;
}

/* Takes a part as recorder/stream.c does: every STREAM_PART_NS, or
 * sooner once the writer has filled half the ring since the last part. */
static void *consume(void *arg)
{
    struct consumer *c = arg;
    pin(c->cpu);
    struct ring_mark mark = { 0 };
    uint64_t last = 0;
    const struct timespec tick = { (time_t)(look_us / 1000000), (long)(look_us % 1000000) * 1000 };
    while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
        nanosleep(&tick, NULL);
        if (!__atomic_load_n(&c->active, __ATOMIC_ACQUIRE))
            continue;                   /* the trace point alone: no look at its ring */
        uint64_t head = __atomic_load_n(&c->ring->head, __ATOMIC_RELAXED), now = now_ns();
        if (head - mark.seq < c->ring->capacity / 2 && now - last < STREAM_PART_NS)
            continue;
        struct ring_snap s;
        struct trace_event ev;
        uint64_t seq;
        ring_snap_begin_from(&s, c->ring, &mark);
        while (ring_snap_next(&s, &ev, &seq))
            c->read++;
        ring_snap_mark(&s, &mark);
        last = now;
    }
    return NULL;
}

/* trace_on on worker 0, rounds alternating alone and with a consumer on
 * `cpu`: prints both figures; nothing without a second CPU. */
static void streamed(unsigned cpu, uint64_t floor)
{
    struct worker *w = &workers[0];
    struct consumer c = { .cpu = cpu, .ring = &w->ring };
    uint64_t alone[MAX_ROUNDS], with[MAX_ROUNDS];
    if (pthread_create(&c.thread, NULL, consume, &c))
        return;
    pin(w->cpu);
    trace_host_ring = &w->ring;
    trace_set_mask(bench_mask(BV_TRACE_ON, saved_mask));
    for (uint64_t r = 0; r < rounds; r++) {
        alone[r] = bench_loop(BV_TRACE_ON, &w->rings, &global, n_events) * 1000 / n_events;
        __atomic_store_n(&c.active, 1, __ATOMIC_RELEASE);
        with[r] = bench_loop(BV_TRACE_ON, &w->rings, &global, n_events) * 1000 / n_events;
        __atomic_store_n(&c.active, 0, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
    pthread_join(c.thread, NULL);
    trace_set_mask(saved_mask);
    uint64_t a = min_u64(alone, (unsigned)rounds), b = min_u64(with, (unsigned)rounds);
    const char *names[2] = { "trace_on_alone", "trace_streamed" };
    uint64_t f[2] = { a, b };
    for (unsigned i = 0; i < 2; i++) {
        uint64_t x = floor ? f[i] * 100 / floor : 0;
        printf("BENCH variant=%s scope=1 ticks=%lu.%03lu x_rdtsc=%lu.%02lu", names[i],
               f[i] / 1000, f[i] % 1000, x / 100, x % 100);
        if (i)
            printf(" read=%lu look_us=%lu", c.read, look_us);
        printf("\n");
    }
}

/* Ticks per event x 1000: per round the mean over threads, then the
 * smallest over the rounds (noise only ever adds time). */
static uint64_t figure(unsigned v, unsigned threads)
{
    uint64_t per_round[MAX_ROUNDS];
    for (uint64_t r = 0; r < rounds; r++) {
        uint64_t sum = 0;
        for (unsigned i = 0; i < threads; i++)
            sum += workers[i].ticks[v][r];
        per_round[r] = sum * 1000 / threads / n_events;
    }
    return min_u64(per_round, (unsigned)rounds);
}

static void print(unsigned threads)
{
    uint64_t floor = figure(BV_RDTSC, threads);
    for (unsigned v = 0; v < BV_COUNT; v++) {
        uint64_t f = figure(v, threads), x = floor ? f * 100 / floor : 0;
        printf("BENCH variant=%s scope=%u ticks=%lu.%03lu x_rdtsc=%lu.%02lu", bench_variants[v].name,
               threads, f / 1000, f % 1000, x / 100, x % 100);
        if (v == BV_SPIN) {
            uint64_t d = 0;
            for (unsigned i = 0; i < threads; i++)
                d += workers[i].rings.spin.drops;
            printf(" drops=%lu", d);
        }
        printf("\n");
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t tsc_hz(void)
{
    uint64_t n0 = now_ns(), t0 = trace_rdtsc();
    while (now_ns() - n0 < CALIBRATE_NS);
    uint64_t n1 = now_ns(), t1 = trace_rdtsc();
    return (t1 - t0) * 1000000000u / (n1 - n0);
}

static int parse(int argc, char **argv)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    nthreads = cpus > 0 && cpus <= MAX_THREADS ? (unsigned)cpus : 1;
    for (int i = 1; i < argc; i++) {
        char *eq = strchr(argv[i], '='), *end;
        unsigned long long v = eq ? strtoull(eq + 1, &end, 10) : 0;
        if (!eq || end == eq + 1 || *end) {
            fprintf(stderr, "hostbench: %s: want n=EVENTS, rounds=N, threads=N or look_us=N\n",
                    argv[i]);
            return -1;
        }
        size_t k = (size_t)(eq - argv[i]);
        if (k == 1 && !strncmp(argv[i], "n", 1) && v >= 1000)
            n_events = v;
        else if (k == 6 && !strncmp(argv[i], "rounds", 6) && v >= 1 && v <= MAX_ROUNDS)
            rounds = v;
        else if (k == 7 && !strncmp(argv[i], "threads", 7) && v >= 1 && v <= MAX_THREADS)
            nthreads = (unsigned)v;
        else if (k == 7 && !strncmp(argv[i], "look_us", 7) && v >= 1 && v <= 1000000)
            look_us = v;
        else {
            fprintf(stderr, "hostbench: %s: unknown or out of range (n >= 1000, rounds 1..%d, "
                            "threads 1..%d, look_us 1..1000000)\n",
                    argv[i], MAX_ROUNDS, MAX_THREADS);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (parse(argc, argv))
        return 2;
    workers = xalloc(nthreads * sizeof *workers);
    cpu_set_t allowed;
    sched_getaffinity(0, sizeof allowed, &allowed);
    unsigned cpu = 0;
    for (unsigned i = 0; i < nthreads; i++) {
        while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &allowed))
            cpu++;
        struct worker *w = &workers[i];
        w->index = i;
        w->cpu = cpu++;
        struct trace_event *slots = xalloc(RING_EVENTS * sizeof *slots);
        ring_init(&w->ring, slots, RING_EVENTS, i & 0xFF);
        struct trace_event *spin = xalloc(RING_EVENTS * sizeof *spin);
        bl_spin_init(&w->rings.spin, spin, RING_EVENTS, i);
        bl_spin_init(&w->rings.strat9, spin, RING_EVENTS, i);   /* one runs at a time */
        bl_wide_init(&w->rings.wide, xalloc(RING_EVENTS * sizeof(struct bl_wide_entry)),
                     RING_EVENTS, i);
    }
    bl_global_init(&global, xalloc(GLOBAL_EVENTS * sizeof(struct trace_event)), GLOBAL_EVENTS);
    saved_mask = TRACE_ENABLE | TRACE_CATS_ALL;
    trace_set_mask(saved_mask);

    uint64_t hz = tsc_hz();
    if (run(1)) {
        fprintf(stderr, "hostbench: cannot start a thread\n");
        return 1;
    }
    printf("BENCH BEGIN where=host cpus=%u n=%lu rounds=%lu tsc_hz=%lu\n", nthreads, n_events,
           rounds, hz);
    print(1);
    if (nthreads > 1)
        streamed(workers[1].cpu, figure(BV_RDTSC, 1));
    if (run(nthreads)) {
        fprintf(stderr, "hostbench: cannot start %u threads\n", nthreads);
        return 1;
    }
    print(nthreads);
    printf("BENCH END\n");
    return 0;
}
