/* snapshot.c — the reader claim, pause and quiesce, the shadow copies. */
#include "recorder/snapshot.h"
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "cpus/cpuwatch.h"
#include "cpus/smp.h"
#include "lib/format.h"
#include "lib/kassert.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "mm/mem.h"
#include "time/tsc.h"
#include "trace/rings.h"
#include "trace/trace.h"

#define QUIESCE_US           10000              /* a trace point takes nanoseconds */
#define NO_OWNER             0xFFFFFFFFu
#define LISTS                2                  /* snapshots one CPU may hold nested */
#define SHADOW_SPARE         (4ull << 20)   /* left for the boot after the shadows */
#define SHADOW_SPARE_PER_CPU (64ull << 10)

static volatile uint32_t owner = NO_OWNER;   /* CPU reading the rings */
static volatile uint64_t progress;           /* its lines written, for the waiters */
static uint32_t depth;                       /* its nested claims */
static bool paused;                          /* it holds tracing paused */
static uint32_t paused_saved;
/* Sized at boot for the CPUs that have rings (snapshot_init): the shadow
 * rings and their slots, and the lists of ring pointers a snapshot hands
 * out (one per nesting depth: the claim nests on its CPU). */
static struct ring *shadows;
static struct trace_event **shadow_slots;
static uint32_t shadow_capacity, shadow_cpus;
static struct ring **lists[LISTS];
static uint32_t list_len;

/* ---- the claim: one reader at a time ------------------------------------ */

void snapshot_progress(void) { __atomic_add_fetch(&progress, 1, __ATOMIC_RELAXED); }

bool snapshot_claim(uint64_t wait_us)
{
    uint32_t cpu = this_cpu_index(), none = NO_OWNER;
    if (owner == cpu) {
        depth++;
        return true;
    }
    uint64_t t0 = rdtsc(), limit = tsc_from_us(wait_us);
    uint64_t seen = __atomic_load_n(&progress, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&owner, &none, cpu, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
        uint64_t now = __atomic_load_n(&progress, __ATOMIC_RELAXED);
        if (now != seen)                /* the reader writes on: wait for all of it */
            seen = now, t0 = rdtsc();
        if (rdtsc() - t0 > limit) {
            kprintf("dump: CPU %u still holds the rings, no line written for %lu s; CPU %u "
                    "goes on without (what it was asked is not done)\n",
                    none,
                    wait_us / 1000000, cpu);
            return false;
        }
        none = NO_OWNER;
        cpu_relax();
    }
    depth = 1;
    return true;
}

void snapshot_unclaim(void)
{
    kassert(depth > 0 && owner == this_cpu_index());
    if (--depth == 0)
        __atomic_store_n(&owner, NO_OWNER, __ATOMIC_RELEASE);
}

bool snapshot_held_here(void) { return owner == this_cpu_index(); }

void snapshot_abandon(void)
{
    if (!snapshot_held_here())
        return;
    if (paused)
        trace_resume(paused_saved);
    paused = false;
    console_unlock_all();
    depth = 0;
    __atomic_store_n(&owner, NO_OWNER, __ATOMIC_RELEASE);
}

void snapshot_stop_tracing(void)
{
    trace_enable(false);
    __atomic_and_fetch(&paused_saved, ~TRACE_ENABLE, __ATOMIC_SEQ_CST);
}

/* ---- pause ---------------------------------------------------------------- */

/* The list for this claim's depth, filled with every CPU's live ring
 * (NULL for one offline or without a ring); NULL when nested too deep. */
static struct ring **collect(unsigned *n)
{
    if (depth > LISTS || !lists[depth - 1]) {
        kprintf("dump: rings read %u deep on CPU %u; this reader goes without\n", depth,
                this_cpu_index());
        return NULL;
    }
    struct ring **rings = lists[depth - 1];
    *n = smp_slots() < list_len ? smp_slots() : list_len;
    for (unsigned i = 0; i < *n; i++)
        rings[i] = cpus[i].online ? rings_of(i) : NULL;
    return rings;
}

/* Pause tracing everywhere and wait (bounded) for writers in flight;
 * the snapshot excludes a straggler's slot. Names the stragglers in busy
 * and the CPUs that stopped answering in silent. */
static void pause_all(struct ring *rings[], unsigned n, char *busy, char *silent, size_t cap)
{
    kassert(!paused);                 /* trace_pause does not nest */
    paused_saved = trace_pause();
    paused = true;
    unsigned left = trace_quiesce(rings, n, tsc_from_us(QUIESCE_US));
    size_t at = 0;
    busy[0] = '\0';
    for (unsigned i = 0; left && i < n; i++)
        if (rings[i] && !ring_quiescent(rings[i]) && at + 12 < cap) {
            at += (size_t)ksnprintf(busy + at, cap - at, "%s%u", at ? "," : "", i);
            kprintf("dump: CPU %u still writing after %u us; its in-flight event is excluded\n",
                    i, QUIESCE_US);
        }
    cpuwatch_list(silent, cap, true);
}

static void resume(void)
{
    paused = false;
    trace_resume(paused_saved);
}

void snapshot_paused(void (*fn)(void))
{
    char busy[64], silent[64];
    unsigned n;
    if (!snapshot_claim(SNAPSHOT_CLAIM_US))
        return;
    struct ring **rings = collect(&n);
    if (!rings) {
        snapshot_unclaim();
        return;
    }
    pause_all(rings, n, busy, silent, sizeof busy);
    fn();
    resume();
    snapshot_unclaim();
}

/* A paused ring's counters (ring.h): the reserve counter is never behind
 * what was committed or cleared, and no boot-log entry is done that was
 * never claimed. A writer still in flight (busy) bumps head before commit
 * and claims an entry before its done bit: so read commit and the done
 * bits first, and a late writer can never make these look broken. */
static void check_ring(struct ring *r)
{
    uint64_t commit = __atomic_load_n(&r->commit, __ATOMIC_ACQUIRE);
    uint64_t done = __atomic_load_n(&r->pinned_done, __ATOMIC_ACQUIRE);
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    uint64_t claimed = __atomic_load_n(&r->pinned_next, __ATOMIC_ACQUIRE);
    kassert(r->base <= head && commit <= head);
    kassert(claimed >= RING_PINNED_SLOTS || (done >> claimed) == 0);
}

/* ---- shadows: all or nothing ---------------------------------------------- */

/* All or nothing: a dump must not copy some CPUs and pause for others. */
void snapshot_init(uint32_t capacity, uint32_t ncpus)
{
    for (unsigned l = 0; l < LISTS; l++)
        lists[l] = mem_alloc((uint64_t)ncpus * sizeof(struct ring *), sizeof(struct ring *));
    list_len = lists[LISTS - 1] ? ncpus : 0;
    if (!list_len)
        kprintf("trace: no memory to list %u rings; no dumps\n", ncpus);
    shadow_capacity = capacity;
    /* Only when they leave what the rest of the boot needs (the APs'
     * stacks and tables): a dump can pause tracing instead, a CPU cannot
     * start without a stack. Checked first so a partial set is never
     * taken and lost (the allocator never frees). */
    uint64_t need = (uint64_t)ncpus * (capacity * sizeof(struct trace_event) + sizeof(struct ring));
    uint64_t spare = SHADOW_SPARE + (uint64_t)ncpus * SHADOW_SPARE_PER_CPU;
    bool room = capacity && mem_available_bytes() >= need + spare;
    if (room) {
        shadows = mem_alloc((uint64_t)ncpus * sizeof *shadows, RING_CACHE_LINE);
        shadow_slots = mem_alloc((uint64_t)ncpus * sizeof *shadow_slots, sizeof *shadow_slots);
    }
    for (uint32_t i = 0; room && shadows && shadow_slots && i < ncpus; i++) {
        shadow_slots[i] = mem_alloc((uint64_t)capacity * sizeof(struct trace_event),
                                    RING_CACHE_LINE);
        if (!shadow_slots[i])
            break;
        shadow_cpus = i + 1;
    }
    if (shadow_capacity && shadow_cpus < ncpus) {
        shadow_cpus = 0;
        kprintf("trace: no memory for dump shadows; dumps pause tracing until done (%lu KiB "
                "for %u CPUs)\n",
                (uint64_t)ncpus * (shadow_capacity * sizeof(struct trace_event) + sizeof(struct ring)) / 1024, ncpus);
    }
}

/* Copy ring `index` (paused and quiescent) into its shadow and return the
 * copy, or NULL when there is no shadow memory. */
static struct ring *shadow_copy(uint32_t index)
{
    struct ring *r = rings_of(index);
    if (!r || index >= shadow_cpus)
        return NULL;
    struct ring *s = &shadows[index];
    memcpy(s, r, sizeof *s);
    s->slots = shadow_slots[index];
    uint32_t capacity = shadow_capacity;
    kassert(s->capacity == capacity);
    /* Only the slots that can hold events since the last clear: a young
     * ring copies in microseconds, a full one in one pass. The window may
     * wrap around the end of the buffer: at most two pieces. */
    uint64_t used = s->head - s->base < capacity ? s->head - s->base : capacity;
    uint64_t first = (s->head - used) & s->mask;
    uint64_t piece = used < capacity - first ? used : capacity - first;
    kassert(used <= capacity && first < capacity && piece <= used);
    memcpy(&s->slots[first], &r->slots[first], piece * sizeof(struct trace_event));
    memcpy(&s->slots[0], &r->slots[0], (used - piece) * sizeof(struct trace_event));
    return s;
}

/* ---- snapshots ------------------------------------------------------------ */

/* Pause, wait for writers in flight, copy every ring to its shadow and
 * resume; without shadows, stay paused on the live rings. This CPU's
 * interrupts are off for those milliseconds only (never for a dump's
 * transfer): its own timer tick then waits for the resume instead of
 * being refused. */
bool snapshot_take(struct snapshot *f)
{
    if (!snapshot_claim(SNAPSHOT_CLAIM_US))
        return false;
    f->rings = collect(&f->n);
    if (!f->rings) {
        snapshot_unclaim();
        return false;
    }
    uint64_t irq = irq_save();
    uint64_t t0 = rdtsc();
    pause_all(f->rings, f->n, f->busy, f->silent, sizeof f->silent);
    /* All or nothing: every ring has a shadow (shadow_copy cannot fail
     * then) or the live rings stay paused. */
    f->copied = true;
    for (unsigned i = 0; i < f->n; i++) {
        if (f->rings[i])
            check_ring(f->rings[i]);
        f->copied &= !f->rings[i] || i < shadow_cpus;
    }
    if (f->copied) {
        for (unsigned i = 0; i < f->n; i++)
            f->rings[i] = f->rings[i] ? shadow_copy(i) : NULL;
        resume();
    }
    f->pause_tsc = rdtsc() - t0;
    irq_restore(irq);
    return true;
}

void snapshot_release(struct snapshot *f)
{
    kassert(f->copied || paused);
    if (!f->copied)
        resume();
    snapshot_unclaim();
}
