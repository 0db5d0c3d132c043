/* ipi.c — the ipi workload: IPI round-trip latency between every ordered
 * pair of CPUs.
 *
 * For each pair (src, dst) the receiver spins with interrupts on; the
 * sender stores a ping number, sends a fixed IPI (VEC_WL_PING) and spins
 * until the receiver's handler has copied the number into its ack word.
 * Round trip = the sender's TSC from just before the ICR write to just
 * after it sees the ack. The median of `samples` round trips is the cell;
 * it is recorded on the sender as IPI_RTT(dest, median ticks), and every
 * ping as IPI_SEND / IPI_RECV. */
#include "arch/cpu.h"
#include "arch/idt.h"
#include "arch/lapic.h"
#include "arch/percpu.h"
#include "lib/kprintf.h"
#include "lib/median.h"
#include "perf/matrix.h"
#include "perf/spinwait.h"
#include "perf/vectors.h"
#include "perf/workload.h"
#include "time/tsc.h"
#include "trace/trace.h"

#define MAX_SAMPLES      256
#define ACK_TIMEOUT_US   1000000    /* one ping: generous, an emulated or preempted CPU can stall long */
#define START_TIMEOUT_US 5000000    /* the partner's side starts (may be a starved emulated CPU) */
#define GIVE_UP_MISSES   3          /* consecutive lost pings end a try */
#define PAIR_TRIES       3

static const struct wl_param params[] = {
    { "samples", "", 32, 1, MAX_SAMPLES, false },
    { "cpus", "", 0, 0, 0, true },
    { NULL, NULL, 0, 0, 0, false },
};

/* Shared by the pair: each word has one writer and its own cache line. */
static struct {
    uint64_t v;
} __attribute__((aligned(64))) ping, ack, ready, stop;
static uint32_t src, dst, samples;
static uint32_t src_at, dst_at, n;  /* their places in list[], and its length */
static uint32_t list[MAX_CPUS];     /* the CPUs measured (matrix.h) */
static uint64_t rtt[MAX_SAMPLES];
static unsigned got;
static int64_t *cells;             /* n x n, by place in list[] */

static void on_ping(struct int_frame *f)
{
    (void)f;
    __atomic_store_n(&ack.v, __atomic_load_n(&ping.v, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
    lapic_eoi();
    trace(IPI_RECV, src, VEC_WL_PING);
}

static void receiver(uint32_t cpu, void *arg)
{
    (void)cpu, (void)arg;
    __atomic_store_n(&ready.v, 1, __ATOMIC_RELEASE);
    /* Interrupts are on: the pings arrive while we spin. */
    uint64_t limit = tsc_from_us(START_TIMEOUT_US + (uint64_t)samples * ACK_TIMEOUT_US);
    spin_until_eq(&stop.v, 1, limit);
}

static void sender(uint32_t cpu, void *arg)
{
    (void)cpu, (void)arg;
    got = 0;
    if (!spin_until_eq(&ready.v, 1, tsc_from_us(START_TIMEOUT_US)))
        goto out;
    uint32_t apic = cpus[dst].apic_id;
    unsigned misses = 0;
    for (uint64_t k = 1; k <= samples && misses < GIVE_UP_MISSES; k++) {
        __atomic_store_n(&ping.v, k, __ATOMIC_RELEASE);
        trace(IPI_SEND, dst, VEC_WL_PING);
        uint64_t t0 = rdtsc();
        lapic_send_ipi(apic, ICR_FIXED | ICR_ASSERT | VEC_WL_PING);
        bool ok = spin_until_eq(&ack.v, k, tsc_from_us(ACK_TIMEOUT_US));
        uint64_t t1 = rdtsc_after_loads();
        if (ok) {
            rtt[got++] = t1 - t0;
            misses = 0;
        } else {
            misses++;
        }
    }
out:
    __atomic_store_n(&stop.v, 1, __ATOMIC_RELEASE);
    if (got) {
        uint64_t m = median_u64(rtt, got);
        cells[src_at * n + dst_at] = (int64_t)m;
        trace(IPI_RTT, dst, m);
    }
}

static void run(const uint64_t *v)
{
    samples = (uint32_t)v[0];
    idt_set_handler(VEC_WL_PING, on_ping);
    uint32_t failed = 0;
    uint64_t timeout = tsc_from_us(2 * START_TIMEOUT_US + (uint64_t)samples * ACK_TIMEOUT_US);
    n = matrix_pick("ipi", workload_cpus(), v[1], list);
    if (n < 2 || !(cells = matrix_cells(0, n))) {
        kprintf("ipi: fewer than 2 CPUs to measure; nothing measured\n");
        return;
    }
    matrix_begin("ipi", (uint64_t)n * (n - 1));
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t d = 0; d < n; d++) {
            if (s == d)
                continue;
            /* More tries when pings went unanswered (see c2c.c). */
            for (unsigned t = 0; t < PAIR_TRIES && cells[s * n + d] == MATRIX_NONE &&
                                 oncpu_usable(list[s]) && oncpu_usable(list[d]);
                 t++) {
                src = list[s], dst = list[d], src_at = s, dst_at = d;
                ping.v = ack.v = ready.v = stop.v = 0;
                oncpu_pair(src, sender, dst, receiver, NULL, timeout);
            }
            failed += cells[s * n + d] == MATRIX_NONE;
            matrix_pair_done();
        }
    matrix_print("ipi: median IPI round trip, send to acknowledgement by the receiver's handler",
                 cells, list, n);
    if (failed)
        kprintf("ipi: %u pairs not measured (a CPU did not answer)\n", failed);
}

const struct workload wl_ipi = { .params = params, .run = run };
