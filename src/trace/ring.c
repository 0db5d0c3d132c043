/* ring.c — ring set-up, boot log, clear and the snapshot reader.
 * The write fast path is inline in ring.h; its protocol is described there. */
#include "trace/ring.h"

enum slot_state { SLOT_VALID,
                  SLOT_OVERWRITTEN,
                  SLOT_EXCLUDED };

int ring_init(struct ring *r, struct trace_event *slots, uint32_t capacity,
              unsigned cpu)
{
    if (!r || !slots || capacity < RING_MIN_CAPACITY ||
        capacity > RING_MAX_CAPACITY || (capacity & (capacity - 1)) ||
        cpu > RING_MAX_CPU || (uintptr_t)slots % RING_CACHE_LINE)
        return -1;
    for (uint32_t i = 0; i < capacity; i++) {
        /* Stale by construction: slot i claims seq i - capacity, a lap
         * before any seq it can hold, so a slot reserved but never
         * written reads as incomplete rather than as a zero event. */
        slots[i].tsc = 0;
        slots[i].id_word = (uint32_t)(i - capacity);
        slots[i].a0 = 0;
        slots[i].a1 = 0;
    }
    r->head = 0;
    r->commit = 0;
    r->refused = 0;
    r->pinned_next = 0;
    r->pinned_done = 0;
    r->result_next = 0;
    for (unsigned i = 0; i < RING_RESULT_SLOTS; i++)
        r->result_seq[i] = RING_NO_SEQ;
    r->slots = slots;
    r->mask = capacity - 1;
    r->id_bits = (uint64_t)(cpu & TRACE_ID_CPU_MASK) << TRACE_ID_CPU_SHIFT;
    r->base = 0;
    r->refused_base = 0;
    r->capacity = capacity;
    r->cpu = cpu;
    return 0;
}

/* A log entry (boot log, results log): event `seq` as ring_write stored it. */
static void log_copy(const struct ring *r, struct trace_event *p, uint64_t seq, uint64_t tsc,
                     uint16_t type, uint8_t flags, uint64_t a0, uint64_t a1)
{
    p->tsc = tsc;
    p->a0 = a0;
    p->a1 = a1;
    p->id_word = (uint32_t)seq | ((uint64_t)type << TRACE_ID_TYPE_SHIFT) |
                 ((uint64_t)flags << TRACE_ID_FLAGS_SHIFT) | r->id_bits;
}

void ring_write_pinned(struct ring *r, uint64_t tsc, uint16_t type,
                       uint8_t flags, uint64_t a0, uint64_t a1)
{
    uint64_t seq = ring_write(r, tsc, type, flags, a0, a1);

    /* Claim a boot-log entry the same way as a ring slot: one non-locked
     * xadd, so a nested pinned event gets its own entry. */
    uint64_t i = 1;
    __asm__ volatile("xaddq %0, %1" : "+r"(i), "+m"(r->pinned_next) : : "memory");
    if (i >= RING_PINNED_SLOTS)
        return;
    log_copy(r, &r->pinned[i], seq, tsc, type, flags, a0, a1);
    r->pinned_seq[i] = seq;

    /* The entry must be complete before its done bit is (TSO keeps the
     * store order; this stops the compiler). The bit is set with one
     * non-locked or: interrupt-atomic, and only this CPU writes the word. */
    __asm__ volatile("" : : : "memory");
    uint64_t bit = 1ull << i;
    __asm__ volatile("orq %1, %0" : "+m"(r->pinned_done) : "r"(bit) : "memory");
}

void ring_write_result(struct ring *r, uint64_t tsc, uint16_t type,
                       uint8_t flags, uint64_t a0, uint64_t a1)
{
    uint64_t seq = ring_write(r, tsc, type, flags, a0, a1);

    /* One non-locked xadd claims the entry, as for the boot log; the
     * oldest result's entry is reused. Its seq is marked unusable first
     * and set last, so a reader never pairs an old seq with new payload
     * (readers see the ring paused, or a copy: the order guards against
     * the compiler). */
    uint64_t i = 1;
    __asm__ volatile("xaddq %0, %1" : "+r"(i), "+m"(r->result_next) : : "memory");
    i %= RING_RESULT_SLOTS;
    r->result_seq[i] = RING_NO_SEQ;
    __asm__ volatile("" : : : "memory");
    log_copy(r, &r->result[i], seq, tsc, type, flags, a0, a1);
    __asm__ volatile("" : : : "memory");
    r->result_seq[i] = seq;
}

void ring_clear(struct ring *r)
{
    __atomic_store_n(&r->base, __atomic_load_n(&r->head, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&r->refused_base,
                     __atomic_load_n(&r->refused, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
}

/* Oldest seq the ring itself can still hold, given base and head. */
static uint64_t window_start(uint64_t base, uint64_t head, uint32_t capacity)
{
    return head - base > capacity ? head - capacity : base;
}

/* Whether an id word is event `seq` of r: its seq, its CPU, and a type
 * (never 0). Memory that was cleared or overwritten (the previous boot's
 * rings after a reset, persist.h) fails this instead of turning into
 * events. */
static bool id_is(const struct ring *r, uint64_t id, uint64_t seq)
{
    return (uint32_t)id == (uint32_t)seq && (id & (0xFFull << TRACE_ID_CPU_SHIFT)) == r->id_bits &&
           ((id >> TRACE_ID_TYPE_SHIFT) & 0xFFFF) != 0;
}

/* Index of the completed boot-log entry with the smallest seq in
 * [from, below), or -1. The done bits are read before the entries: the
 * writer completes an entry before setting its bit (TSO keeps loads in
 * order, so a set bit means the entry is visible). */
static int pinned_find(const struct ring *r, uint64_t from, uint64_t below)
{
    uint64_t done = __atomic_load_n(&r->pinned_done, __ATOMIC_RELAXED);
    __asm__ volatile("" : : : "memory");
    int best = -1;
    for (int i = 0; i < RING_PINNED_SLOTS; i++) {
        if (!(done & (1ull << i)))
            continue;
        uint64_t s = r->pinned_seq[i];
        if (!id_is(r, r->pinned[i].id_word, s))
            continue;
        if (s >= from && s < below && (best < 0 || s < r->pinned_seq[best]))
            best = i;
    }
    return best;
}

/* Index of the results-log entry with the smallest seq in [from, below),
 * or -1. An entry counts when its seq is set and its id word agrees. */
static int result_find(const struct ring *r, uint64_t from, uint64_t below)
{
    int best = -1;
    for (int i = 0; i < RING_RESULT_SLOTS; i++) {
        uint64_t s = r->result_seq[i];
        if (s == RING_NO_SEQ || s < from || s >= below || !id_is(r, r->result[i].id_word, s))
            continue;
        if (best < 0 || s < r->result_seq[best])
            best = i;
    }
    return best;
}

/* The oldest event either log holds with a seq in [from, below): its seq,
 * and the event; false when neither has one. A seq in both logs (a
 * RESULT event is never PINNED) cannot happen. */
static bool logged_find(const struct ring *r, uint64_t from, uint64_t below,
                        uint64_t *seq, const struct trace_event **ev)
{
    int p = pinned_find(r, from, below), q = result_find(r, from, below);
    if (p < 0 && q < 0)
        return false;
    if (q < 0 || (p >= 0 && r->pinned_seq[p] < r->result_seq[q])) {
        *seq = r->pinned_seq[p];
        *ev = &r->pinned[p];
    } else {
        *seq = r->result_seq[q];
        *ev = &r->result[q];
    }
    return true;
}

uint64_t ring_held(const struct ring *r) { return ring_held_from(r, 0); }

uint64_t ring_held_from(const struct ring *r, uint64_t from)
{
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
    uint64_t base = __atomic_load_n(&r->base, __ATOMIC_RELAXED);
    if (from > base)
        base = from < head ? from : head;
    uint64_t win = window_start(base, head, r->capacity);
    uint64_t n = head - win, seq;
    const struct trace_event *ev;
    for (uint64_t from = base; logged_find(r, from, win, &seq, &ev); n++)
        from = seq + 1;
    return n;
}

void ring_snap_begin(struct ring_snap *s, struct ring *r)
{
    s->r = r;
    s->head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
    s->base = __atomic_load_n(&r->base, __ATOMIC_RELAXED);
    s->window = window_start(s->base, s->head, r->capacity);
    s->next = s->base;
    s->refused = __atomic_load_n(&r->refused, __ATOMIC_RELAXED) - r->refused_base;
    s->pinned = __atomic_load_n(&r->pinned_next, __ATOMIC_RELAXED);
    s->results = __atomic_load_n(&r->result_next, __ATOMIC_RELAXED);
    s->sent = s->overwritten = s->excluded = 0;
    s->first = s->last = s->prev_last = 0;
    s->gap_overwritten = s->gap_excluded = 0;
    s->live = s->stopped = false;
    s->held = RING_NO_SEQ;
    s->refused_now = s->refused + r->refused_base;
}

void ring_snap_begin_from(struct ring_snap *s, struct ring *r, const struct ring_mark *from)
{
    ring_snap_begin(s, r);
    s->live = true;
    if (!from)
        return;
    /* Never below the last clear (those seqs are not recorded), never
     * above head (a mark from the future: nothing to take). */
    uint64_t seq = from->seq > s->base ? from->seq : s->base;
    s->base = s->next = seq < s->head ? seq : s->head;
    s->window = window_start(s->base, s->head, r->capacity);
    s->refused = s->refused_now - from->refused;
    s->held = from->held ? from->seq : RING_NO_SEQ;
}

void ring_snap_mark(const struct ring_snap *s, struct ring_mark *next)
{
    next->seq = s->head;
    next->refused = s->refused_now;
    next->held = s->stopped;
    next->overwritten = s->overwritten;
    next->excluded = s->excluded;
}

void ring_snap_cut(struct ring_snap *s, uint64_t seq)
{
    if (seq < s->base || seq >= s->head || !s->sent || seq != s->last)
        return;                          /* not the event just returned */
    s->sent--;
    s->last = s->prev_last;
    s->head = s->next = seq;
    s->gap_overwritten = s->gap_excluded = 0;
}

/* Copies the slot for `seq` and says whether the copy is that event. */
static enum slot_state read_slot(const struct ring *r, uint64_t seq,
                                 struct trace_event *out)
{
    const volatile struct trace_event *e = &r->slots[seq & r->mask];

    /* The id word first: the writer stores it last, so if it holds this
     * seq, the payload loads that follow see this event's payload (TSO:
     * stores become visible in order, loads are not reordered). */
    uint64_t id = e->id_word;
    out->tsc = e->tsc;
    out->a0 = e->a0;
    out->a1 = e->a1;
    out->id_word = id;
    __asm__ volatile("" : : : "memory");

    /* Then head again: a writer lapping this slot while we copied bumped
     * head before touching the slot, so a torn copy always shows here. */
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
    if (head - seq > r->mask + 1)       /* seq + capacity was reserved */
        return SLOT_OVERWRITTEN;
    return id_is(r, id, seq) ? SLOT_VALID : SLOT_EXCLUDED;
}

static void snap_skip(struct ring_snap *s, uint64_t n, enum slot_state why)
{
    if (why == SLOT_OVERWRITTEN) {
        s->overwritten += n;
        s->gap_overwritten += n;
    } else {
        s->excluded += n;
        s->gap_excluded += n;
    }
}

static bool snap_emit(struct ring_snap *s, uint64_t seq, uint64_t *seq_out)
{
    if (s->sent++ == 0)
        s->first = seq;
    s->prev_last = s->last;
    s->last = seq;
    *seq_out = seq;
    return true;
}

/* A results-log entry is reused by its writer (ring_write_result marks
 * its seq unusable before the payload changes): after copying one behind
 * a live writer, its seq must still be the one found. Boot-log entries
 * are written once. */
static bool log_entry_kept(const struct ring *r, const struct trace_event *p, uint64_t seq)
{
    if (p < r->result || p >= r->result + RING_RESULT_SLOTS)
        return true;
    __asm__ volatile("" : : : "memory");
    return *(const volatile uint64_t *)&r->result_seq[p - r->result] == seq;
}

/* Below the window only the boot log and the results log can still have
 * events. */
static bool snap_logged(struct ring_snap *s, struct trace_event *ev,
                        uint64_t *seq)
{
    const struct trace_event *p;
    uint64_t found;
    bool any = logged_find(s->r, s->next, s->window, &found, &p);
    uint64_t to = any ? found : s->window;
    snap_skip(s, to - s->next, SLOT_OVERWRITTEN);
    s->next = to;
    if (!any)
        return false;
    ev->tsc = p->tsc;
    ev->id_word = p->id_word;
    ev->a0 = p->a0;
    ev->a1 = p->a1;
    s->next = to + 1;
    if (!log_entry_kept(s->r, p, to)) {  /* reused while we copied (live ring) */
        snap_skip(s, 1, SLOT_OVERWRITTEN);
        return false;
    }
    return snap_emit(s, to, seq);
}

/* A live snapshot meets unfinished slot n: a write in flight near head
 * ends the snapshot there, once (the next part takes the slot, or
 * excludes it if it is still unfinished then). True when it ended. */
static bool in_flight_stop(struct ring_snap *s, uint64_t n)
{
    if (!s->live || n == s->held || n + RING_INFLIGHT_NEAR < s->head)
        return false;
    s->head = s->next = n;
    s->stopped = true;
    return true;
}

bool ring_snap_next(struct ring_snap *s, struct trace_event *ev, uint64_t *seq)
{
    s->gap_overwritten = s->gap_excluded = 0;
    while (s->next < s->head) {
        if (s->next < s->window) {
            if (snap_logged(s, ev, seq))
                return true;
            continue;
        }
        uint64_t n = s->next++;
        enum slot_state st = read_slot(s->r, n, ev);
        if (st == SLOT_VALID)
            return snap_emit(s, n, seq);
        if (st == SLOT_EXCLUDED && in_flight_stop(s, n))
            return false;
        snap_skip(s, 1, st);
    }
    return false;
}
