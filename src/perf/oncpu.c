/* oncpu.c — mailboxes, the wake IPI, and the group barrier. */
#include "perf/oncpu.h"
#include "arch/cpu.h"
#include "arch/idt.h"
#include "arch/lapic.h"
#include "arch/percpu.h"
#include "cpus/smp.h"
#include "lib/kprintf.h"
#include "perf/vectors.h"
#include "time/deadline.h"
#include "time/tsc.h"
#include "trace/trace.h"

#define REWAKE_US     1000      /* re-send the wake IPI this often while waiting */
/* An AP of an oncpu_all job waits at most this long for the start: the
 * boot CPU gives each AP up to ONCPU_CLAIM_MS to take the job, in turn
 * (the CPUs that have an index, not the build's ceiling). */
#define GO_TIMEOUT_US ((uint64_t)ONCPU_CLAIM_MS * 1000 * (smp_slots() + 1))

/* A job moves EMPTY -> POSTED (boot CPU) -> RUNNING (the CPU takes it) ->
 * DONE (the CPU finished) -> EMPTY (the boot CPU collected it). A job not
 * taken in time goes POSTED -> EMPTY by compare-exchange, so the CPU and
 * the boot CPU can never both think they own it. */
enum { MB_EMPTY,
       MB_POSTED,
       MB_RUNNING,
       MB_DONE };

struct mailbox {
    uint32_t state;
    uint32_t lost;              /* overran a caller's limit; still RUNNING */
    uint32_t absent;            /* did not take a job: skipped until oncpu_new_run */
    oncpu_fn fn;
    void *arg;
} __attribute__((aligned(64)));

static struct mailbox box[MAX_CPUS];

/* The current oncpu_all job: what each AP runs once `go` matches. */
static oncpu_fn group_fn;
static void *group_arg;
static uint32_t group_go, group_gen;
static bool group_member[MAX_CPUS];

/* Barrier: each member counts the barriers it has passed in its own line. */
static struct bar_slot {
    uint32_t passed;
    uint32_t skip;              /* was late once: not waited for again */
} __attribute__((aligned(64))) bar[MAX_CPUS];

static uint32_t load32(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

static void on_wake(struct int_frame *f)
{
    (void)f;
    /* Nothing to do here: waking from hlt is the point; the idle loop then
     * finds the job. Traced so a timeline shows why the CPU woke. */
    trace(IPI_RECV, 0, VEC_WL_WAKE);
    lapic_eoi();
}

static void on_done(struct int_frame *f)
{
    (void)f;
    lapic_eoi();
}

void oncpu_init(void)
{
    idt_set_handler(VEC_WL_WAKE, on_wake);
    idt_set_handler(VEC_WL_DONE, on_done);
}

uint32_t oncpu_slots(void) { return smp_slots(); }

bool oncpu_usable(uint32_t cpu)
{
    if (cpu == 0)
        return true;
    if (cpu >= smp_slots() || !cpus[cpu].online)
        return false;
    struct mailbox *m = &box[cpu];
    if (m->lost && load32(&m->state) == MB_DONE) {
        /* The lost job finished after all: the CPU is back. */
        m->lost = 0;
        __atomic_store_n(&m->state, MB_EMPTY, __ATOMIC_RELEASE);
    }
    return !m->lost && !m->absent;
}

void oncpu_new_run(void)
{
    for (uint32_t i = 0; i < MAX_CPUS; i++)
        box[i].absent = 0;
}

static void wake(uint32_t cpu)
{
    trace(IPI_SEND, cpu, VEC_WL_WAKE);
    lapic_send_ipi(cpus[cpu].apic_id, ICR_FIXED | ICR_ASSERT | VEC_WL_WAKE);
}

void oncpu_poll(void)
{
    struct percpu *c = this_cpu();
    struct mailbox *m = &box[c->index];
    uint32_t expect = MB_POSTED;
    if (load32(&m->state) != MB_POSTED ||
        !__atomic_compare_exchange_n(&m->state, &expect, MB_RUNNING, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    irq_enable();
    m->fn(c->index, m->arg);
    irq_disable();
    __atomic_store_n(&m->state, MB_DONE, __ATOMIC_RELEASE);
    /* The boot CPU halts while it waits (oncpu_wait): wake it. Not traced:
     * its handler could not name the sender. */
    lapic_send_ipi(cpus[0].apic_id, ICR_FIXED | ICR_ASSERT | VEC_WL_DONE);
}

/* Post without waiting; false when the CPU cannot take a job now. */
static bool post(uint32_t cpu, oncpu_fn fn, void *arg)
{
    if (cpu == 0 || !oncpu_usable(cpu) || load32(&box[cpu].state) != MB_EMPTY)
        return false;
    box[cpu].fn = fn;
    box[cpu].arg = arg;
    __atomic_store_n(&box[cpu].state, MB_POSTED, __ATOMIC_RELEASE);
    wake(cpu);
    return true;
}

/* Wait until a posted job is taken; withdraw it after ONCPU_CLAIM_MS. The
 * wake IPI is re-sent meanwhile: one that lands just before the CPU halts
 * only ends that idle pass, and the next one wakes it. */
static bool claimed(uint32_t cpu)
{
    uint64_t t0 = rdtsc(), last = t0, rewake = tsc_from_us(REWAKE_US);
    uint64_t limit = tsc_from_us(ONCPU_CLAIM_MS * 1000ull);
    while (load32(&box[cpu].state) == MB_POSTED) {
        uint64_t now = rdtsc();
        if (now - t0 >= limit) {
            uint32_t expect = MB_POSTED;
            if (__atomic_compare_exchange_n(&box[cpu].state, &expect, MB_EMPTY, false,
                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                kprintf("workload: CPU %u did not take its job within %u ms; left out of "
                        "this run\n",
                        cpu, ONCPU_CLAIM_MS);
                box[cpu].absent = 1;
                return false;
            }
            break;                      /* taken at the last moment */
        }
        if (now - last >= rewake) {
            wake(cpu);
            last = now;
        }
        cpu_relax();
    }
    return true;
}

bool oncpu_start(uint32_t cpu, oncpu_fn fn, void *arg)
{
    return post(cpu, fn, arg) && claimed(cpu);
}

/* Halt until `state` is DONE: the CPU's done IPI (or any interrupt, at
 * least the tick) ends each hlt, and sti takes effect only once hlt has
 * begun, so the IPI cannot slip in between the check and the hlt. A
 * spinning boot CPU would take a host core from the CPUs being measured
 * under QEMU, and on hardware it has nothing to do either. */
static void halt_unless_done(const uint32_t *state)
{
    __asm__ volatile("cli; cmpl %1, %0; je 1f; sti; hlt; 1: sti"
                     : : "m"(*state), "i"(MB_DONE) : "memory");
}

bool oncpu_wait(uint32_t cpu, uint64_t timeout_tsc)
{
    uint64_t t0 = rdtsc();
    while (load32(&box[cpu].state) != MB_DONE) {
        halt_unless_done(&box[cpu].state);
        if (load32(&box[cpu].state) != MB_DONE && rdtsc() - t0 >= timeout_tsc) {
            box[cpu].lost = 1;
            kprintf("workload: CPU %u still busy after %lu ms; left out until it finishes\n",
                    cpu, tsc_to_us(timeout_tsc) / 1000);
            return false;
        }
        cpu_relax();
    }
    __atomic_store_n(&box[cpu].state, MB_EMPTY, __ATOMIC_RELEASE);
    return true;
}

/* What each AP of an oncpu_all job runs: wait for the start, then fn. */
static void group_entry(uint32_t cpu, void *arg)
{
    uint32_t gen = (uint32_t)(uintptr_t)arg;
    struct deadline end = deadline_in_us(GO_TIMEOUT_US);
    while (load32(&group_go) != gen) {
        if (deadline_passed(end))
            return;                     /* the boot CPU never said go */
        cpu_relax();
    }
    group_fn(cpu, group_arg);
}

unsigned oncpu_all(oncpu_fn fn, void *arg, uint64_t timeout_tsc, bool *ran)
{
    uint32_t n = smp_slots(), gen = ++group_gen;
    group_fn = fn;
    group_arg = arg;
    for (uint32_t i = 0; i < n; i++) {
        group_member[i] = i == 0 || post(i, group_entry, (void *)(uintptr_t)gen);
        bar[i].passed = 0;
        bar[i].skip = 0;
    }
    for (uint32_t i = 1; i < n; i++)
        if (group_member[i])
            group_member[i] = claimed(i);
    __atomic_store_n(&group_go, gen, __ATOMIC_RELEASE);
    fn(0, arg);
    unsigned count = 1;
    for (uint32_t i = 1; i < n; i++) {
        if (group_member[i])
            group_member[i] = oncpu_wait(i, timeout_tsc);
        count += group_member[i];
    }
    if (ran)
        for (uint32_t i = 0; i < MAX_CPUS; i++)
            ran[i] = i < n && group_member[i];
    return count;
}

bool oncpu_pair(uint32_t a, oncpu_fn fa, uint32_t b, oncpu_fn fb, void *arg,
                uint64_t timeout_tsc)
{
    /* The boot CPU's own side, if any, runs here after the other took its job. */
    oncpu_fn local = a == 0 ? fa : b == 0 ? fb
                                          : NULL;
    bool ok_a = a == 0 || oncpu_start(a, fa, arg);
    bool ok_b = ok_a && (b == 0 || oncpu_start(b, fb, arg));
    if (ok_b && local)
        local(0, arg);
    if (a != 0 && ok_a)
        ok_a = oncpu_wait(a, timeout_tsc);
    if (b != 0 && ok_b)
        ok_b = oncpu_wait(b, timeout_tsc);
    return ok_a && ok_b;
}

bool oncpu_barrier(uint64_t timeout_tsc)
{
    uint32_t me = this_cpu()->index, n = smp_slots();
    uint32_t target = __atomic_add_fetch(&bar[me].passed, 1, __ATOMIC_ACQ_REL);
    uint64_t t0 = rdtsc();
    for (;;) {
        bool all = true;
        for (uint32_t i = 0; i < n && all; i++)
            all = !group_member[i] || load32(&bar[i].skip) || load32(&bar[i].passed) >= target;
        if (all)
            return true;
        if (rdtsc() - t0 >= timeout_tsc)
            break;
        cpu_relax();
    }
    for (uint32_t i = 0; i < n; i++)
        if (group_member[i] && load32(&bar[i].passed) < target)
            __atomic_store_n(&bar[i].skip, 1, __ATOMIC_RELEASE);
    return false;
}
