/* ring.h — one CPU's trace ring: lock-free, overwrite-oldest, nesting-safe.
 *
 * Model: the Linux ring buffer, cut down to what one writer per CPU needs.
 * Only the owning CPU writes events into its ring, so the write path has
 * no lock and no lock-prefixed instruction. Interrupts on that CPU are the
 * only concurrency a writer sees, so every step that must not be split by
 * a nested trace() is one instruction (a non-locked xadd/inc is atomic
 * with respect to interrupts on the CPU executing it). Other CPUs only
 * read: a dump while tracing is paused (trace.h), for the moment it takes
 * to copy every ring into its shadow (trace/rings.h), which the dump then
 * reads at leisure, or, without shadow memory, for a whole dump; a
 * stream's consumer behind the running writer (ring_snap_begin_from),
 * with the read protocol below, which needs no pause.
 *
 * Sequence numbers: the reserve counter `head` hands out 0, 1, 2, ... and
 * never goes back (ring_clear moves `base` instead), so seq n lives in
 * slot n & mask, and a slot is valid for seq n exactly when its stored
 * seq equals n's low 32 bits. A slot still holding an older lap's seq is
 * stale: its new event is reserved but not written yet (or was lost).
 *
 * Write protocol (ring_write):
 *   1. seq = xadd(head, 1)             reserve: one interrupt-atomic insn
 *   2. store tsc, a0, a1               payload; slot still shows old seq
 *   3. store id word (seq|type|cpu|flags)   publishes the event
 *   4. inc commit                      commit == head <=> nothing in flight
 * On x86 (TSO) stores become visible in program order, so the compiler
 * barriers below are the only fences needed.
 *
 * TSC order: the trace point reads the TSC before step 1 (trace.h), so an
 * interrupt between that RDTSC and the reservation records its events
 * first and the interrupted event follows them with an earlier TSC. In seq
 * order a CPU's TSC may therefore step back, by at most one interrupt's
 * length, to between the events around the nested run. Closing that gap
 * would take cli/popf on every event. The CTF export merges such
 * stretches back into time order (docs/export-formats.md, CTF), and test_trace's
 * check_tsc_order holds the step to exactly this shape.
 *
 * Read protocol (ring_snap_*): read the id word first (valid only if it
 * holds the expected seq, which implies the whole payload is visible),
 * then the payload, then head again: if head moved past seq + capacity
 * meanwhile the slot was reused under us and the copy is discarded as
 * overwritten.
 *
 * Boot log: PINNED events (events.def) are also copied into a small per-CPU
 * array the ring never overwrites, keeping their seq; a dump takes a pinned
 * event from the boot log only when its seq is older than what the ring
 * still holds, so nothing is dumped twice and seq stays the one numbering.
 *
 * Results log: RESULT events (a workload's results) are likewise copied
 * into a per-CPU circular log of the newest RING_RESULT_SLOTS of them, so
 * a measurement survives the ring wrapping (a minute of timer ticks)
 * until newer results push it out; a dump rescues them the same way.
 *
 * Per-type event counts are not kept here: a counter per type would touch
 * a second cache line on every event. The decoder counts from the events
 * and the ring's loss counters cover the rest. */
#ifndef TRACE_RING_H
#define TRACE_RING_H
#include <stdbool.h>
#include <stdint.h>
#include "trace/event.h"

#define RING_CACHE_LINE   64
#define RING_PINNED_SLOTS 64          /* boot-log entries per CPU (fits pinned_done) */
#define RING_RESULT_SLOTS 512         /* results-log entries per CPU: a 256-CPU matrix row */
#define RING_NO_SEQ       (~0ull)     /* a results-log entry being written, or never */
#define RING_MIN_CAPACITY 8
#define RING_MAX_CAPACITY (1u << 30)
#define RING_MAX_CPU      0xFFFFFFu   /* far above any MAX_CPUS; keeps ids sane */

struct ring {
    /* The owning CPU's cache line: the fast path touches this line and the
     * slot, nothing else. Counters here are written by the owner only;
     * the pointer, mask and id bits are constant after ring_init. */
    uint64_t head;          /* next seq to reserve (non-locked xadd) */
    uint64_t commit;        /* events completely written (non-locked inc) */
    uint64_t refused;       /* events refused while tracing was paused */
    uint64_t pinned_next;   /* next boot-log entry to reserve (xadd) */
    uint64_t pinned_done;   /* bit i: boot-log entry i complete */
    struct trace_event *slots;
    uint64_t mask;          /* capacity - 1 */
    uint64_t id_bits;       /* (cpu & 0xFF) << TRACE_ID_CPU_SHIFT, ready to OR in */

    /* Control line: written only by ring_init and ring_clear (on any CPU,
     * while this ring is paused), never by the writer: own cache line so
     * a clear cannot false-share with the writer's counters. */
    uint64_t base __attribute__((aligned(RING_CACHE_LINE)));
                            /* seq of the first event since the last clear */
    uint64_t refused_base;  /* refused at the last clear */
    uint32_t capacity;
    uint32_t cpu;

    /* Boot log, written by the owner on PINNED events only. */
    uint64_t pinned_seq[RING_PINNED_SLOTS] __attribute__((aligned(RING_CACHE_LINE)));
    struct trace_event pinned[RING_PINNED_SLOTS];

    /* Results log, written by the owner on RESULT events only: entry
     * result_next % RING_RESULT_SLOTS is the next to reuse. */
    uint64_t result_next __attribute__((aligned(RING_CACHE_LINE)));
    uint64_t result_seq[RING_RESULT_SLOTS];
    struct trace_event result[RING_RESULT_SLOTS];
} __attribute__((aligned(RING_CACHE_LINE)));

_Static_assert(offsetof(struct ring, base) == RING_CACHE_LINE,
               "writer fields fill exactly the first cache line");

/* Sets up r over caller-provided memory: `slots` holds `capacity` events,
 * capacity a power of two in [RING_MIN_CAPACITY, RING_MAX_CAPACITY], slots
 * aligned to RING_CACHE_LINE. `cpu` (<= RING_MAX_CPU) is the ring's CPU
 * (r->cpu, which the dump names); its low 8 bits are stamped into every
 * event (event.h: a check byte, not the CPU's identity).
 * Returns 0, or -1 (r untouched) when an argument is out of range. */
int ring_init(struct ring *r, struct trace_event *slots, uint32_t capacity,
              unsigned cpu);

/* Test hook (host unit tests only): define RING_TEST_HOOKS before
 * including this header to have ring_write call ring_test_hook(r, stage)
 * right after reserving (stage 1) and after the payload (stage 2), the
 * two places an interrupt can split a write. */
#ifdef RING_TEST_HOOKS
extern void (*ring_test_hook)(struct ring *r, int stage);
#define RING_TEST_POINT(r, stage)                         \
    do {                                                  \
        if (ring_test_hook) ring_test_hook((r), (stage)); \
    } while (0)
#else
#define RING_TEST_POINT(r, stage) \
    do {                          \
    } while (0)
#endif

/* The fast path: records one event on the calling CPU's own ring (never
 * call it on another CPU's ring). Returns the event's seq. */
static inline uint64_t ring_write(struct ring *r, uint64_t tsc, uint16_t type,
                                  uint8_t flags, uint64_t a0, uint64_t a1)
{
    /* Reserve. Non-locked: only this CPU writes head. One instruction: an
     * interrupt lands before or after it, so a nested writer gets the next
     * seq and its own slot. The memory clobber keeps the slot stores after
     * it, and TSO makes them visible after it: a reader that sees any new
     * byte in the slot also sees the new head and drops the slot. */
    uint64_t seq = 1;
    __asm__ volatile("xaddq %0, %1" : "+r"(seq), "+m"(r->head) : : "memory");
    struct trace_event *e = &r->slots[seq & r->mask];
    RING_TEST_POINT(r, 1);

    /* Payload first: until the id word below lands, the slot still holds
     * the previous lap's seq, so readers see it as incomplete, not torn. */
    e->tsc = tsc;
    e->a0 = a0;
    e->a1 = a1;
    RING_TEST_POINT(r, 2);

    /* Publish: the id word (seq, type, cpu, flags) in one 8-byte store,
     * after the payload. Compiler barrier only: the CPU keeps store order. */
    __asm__ volatile("" : : : "memory");
    *(volatile uint64_t *)&e->id_word =
        (uint32_t)seq | ((uint64_t)type << TRACE_ID_TYPE_SHIFT) |
        ((uint64_t)flags << TRACE_ID_FLAGS_SHIFT) | r->id_bits;

    /* Commit: one non-locked inc, after the publish (memory clobber). A
     * nested writer commits before we do, so commit == head only when no
     * write is half done on this CPU (ring_quiescent). */
    __asm__ volatile("incq %0" : "+m"(r->commit) : : "memory");
    return seq;
}

/* ring_write plus a copy in the boot log (for PINNED events; out of line:
 * they are rare). When the boot log is full the event is in the ring only
 * and the overflow shows as pinned > RING_PINNED_SLOTS in the dump. */
void ring_write_pinned(struct ring *r, uint64_t tsc, uint16_t type,
                       uint8_t flags, uint64_t a0, uint64_t a1);
/* ring_write plus a copy in the results log (RESULT events: rare, out of
 * line). The log keeps the newest RING_RESULT_SLOTS; older ones are then
 * in the ring only. */
void ring_write_result(struct ring *r, uint64_t tsc, uint16_t type,
                       uint8_t flags, uint64_t a0, uint64_t a1);

/* Counts an event refused because tracing is paused (owner CPU only). */
static inline void ring_refuse(struct ring *r)
{
    /* One non-locked inc: interrupt-atomic on the owning CPU. */
    __asm__ volatile("incq %0" : "+m"(r->refused) : : "memory");
}

/* True when no write is half done on r's CPU right now. Any CPU may ask.
 * commit is read before head: head >= commit always and head only grows,
 * so equal values mean both were equal at the moment commit was read. */
static inline bool ring_quiescent(const struct ring *r)
{
    uint64_t c = __atomic_load_n(&r->commit, __ATOMIC_RELAXED);
    __asm__ volatile("" : : : "memory");   /* keep the two loads in order */
    uint64_t h = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
    return c == h;
}

/* Forgets every event and resets the counters (recorded, overwritten,
 * refused) of r, including its boot log. Call with tracing paused and r
 * quiescent. seq numbers keep counting up: the clear moves `base`. */
void ring_clear(struct ring *r);

/* How many events a dump of r would hold now (ring + rescued boot-log
 * entries), without validating slots: an estimate for DUMP BEGIN. */
uint64_t ring_held(const struct ring *r);
/* The same for the seqs from `from` on (a stream's part). */
uint64_t ring_held_from(const struct ring *r, uint64_t from);

/* Snapshot of a ring that holds still (a shadow copy, or a live ring with
 * tracing paused): enumerates the events recorded since the last
 * clear, oldest to newest, each valid one once, and accounts for every
 * other seq in [base, head) as overwritten or excluded:
 *   recorded    = head - base = sent + overwritten + excluded
 *   overwritten   the ring wrapped over it (and the boot log had no copy)
 *   excluded      its slot was incomplete, torn or stale at read time
 *   refused       trace points refused while paused (these have no seq)
 * Events written after ring_snap_begin (seq >= head) are left for the next
 * dump. Usage:
 *     struct ring_snap s; struct trace_event ev; uint64_t seq;
 *     ring_snap_begin(&s, r);
 *     while (ring_snap_next(&s, &ev, &seq)) use(ev, seq, s.gap_overwritten, s.gap_excluded);
 *     then s.sent, s.overwritten, s.excluded, s.first, s.last are final. */
/* A stream's place in one CPU's ring, from one part to the next
 * (docs/streaming.md): where the next part starts, the ring's refusals
 * counted up to there, and whether that first seq's slot was in flight
 * when the previous part stopped at it. */
struct ring_mark {
    uint64_t seq;               /* the next part's first seq */
    uint64_t refused;           /* r->refused when the previous part began */
    bool held;                  /* seq was left in flight by the previous part */
    /* What the previous part lost (ring_snap_mark; not read back): */
    uint64_t overwritten, excluded;
};

/* An unfinished slot this close to head is a write in flight (the writer,
 * or writers nested in it, are between reserve and publish): a live
 * snapshot stops there once and leaves it for the next one. Further back
 * it can only be a write that never finished: excluded at once. */
#define RING_INFLIGHT_NEAR 64

struct ring_snap {
    struct ring *r;
    uint64_t base;          /* first seq since the last clear */
    uint64_t head;          /* head when the snapshot began */
    uint64_t window;        /* oldest seq the ring itself may still hold */
    uint64_t next;          /* cursor: next seq to look at */
    uint64_t refused;       /* refused since the last clear */
    uint64_t pinned;        /* boot-log entries ever reserved */
    uint64_t results;       /* results-log entries ever reserved */
    uint64_t sent, overwritten, excluded;
    uint64_t first, last;   /* seqs of the first/last sent event */
    uint64_t gap_overwritten;  /* seqs skipped right before the event just */
    uint64_t gap_excluded;     /* returned (or after the last, at the end) */
    /* Live snapshots (ring_snap_begin_from) only: */
    bool live;
    bool stopped;           /* head is a slot left in flight for the next part */
    uint64_t held;          /* a seq the previous part left in flight, or RING_NO_SEQ */
    uint64_t refused_now;   /* r->refused at begin */
    uint64_t prev_last;     /* last before the event just returned (ring_snap_cut) */
};

void ring_snap_begin(struct ring_snap *s, struct ring *r);

/* A snapshot of a live ring, read behind its writer without pausing it
 * (a stream's part): the seqs [from->seq, head) with head read now
 * (from == NULL: the ring's base, as ring_snap_begin). Each slot is read
 * with the read protocol above, so a slot the writer laps meanwhile is
 * counted overwritten, never torn. An unfinished slot within
 * RING_INFLIGHT_NEAR of head ends the snapshot there (head becomes its
 * seq, stopped is set) unless from->held says the previous part already
 * stopped at it: then it is excluded. refused counts the refusals since
 * from->refused. from->seq below the ring's base (a clear) starts at base. */
void ring_snap_begin_from(struct ring_snap *s, struct ring *r, const struct ring_mark *from);
/* After the last ring_snap_next (or ring_snap_cut): where the next part
 * starts. */
void ring_snap_mark(const struct ring_snap *s, struct ring_mark *next);
/* Ends the snapshot before `seq`, the event ring_snap_next just returned,
 * which is not taken (the part is out of room): head becomes seq, and
 * that event counts in no total; the next part starts with it. */
void ring_snap_cut(struct ring_snap *s, uint64_t seq);

/* Next valid event (and its full seq); false when done. */
bool ring_snap_next(struct ring_snap *s, struct trace_event *ev, uint64_t *seq);

#endif
