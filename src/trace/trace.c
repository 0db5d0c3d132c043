/* trace.c — trace_mask, its switches, pause/quiesce, and the name tables
 * generated from events.def. */
#include "trace/trace.h"

/* Read by every trace point on every CPU, written rarely: its own cache
 * line so no hot data shares it (every write invalidates it everywhere). */
uint32_t trace_mask __attribute__((aligned(64)));

#ifdef HOST_BUILD
_Thread_local struct ring *trace_host_ring;
#endif

static uint64_t no_ring_events;

/* events.def marks a signed argument by starting its name with "s:". */
#define ARG_SIGNED(a) ((a)[0] == 's' && (a)[1] == ':')
#define ARG_NAME(a)   ((a) + (ARG_SIGNED(a) ? 2 : 0))

static const struct trace_event_info event_table[] = {
#define TRACE_EVENT(id, name, cat, kind, ret, a0, a1, desc)      \
    { (id), TRACE_CAT_##cat, TRACE_KIND_##kind, TRACE_RET_##ret, \
      (uint8_t)((ARG_SIGNED(a0) ? TRACE_ARG0_SIGNED : 0u) |      \
                (ARG_SIGNED(a1) ? TRACE_ARG1_SIGNED : 0u)),      \
      #name, ARG_NAME(a0), ARG_NAME(a1), (desc) },
#include "trace/events.def"
};

#define EVENT_COUNT (sizeof event_table / sizeof event_table[0])

static const char *const category_names[30] = {
#define TRACE_CATEGORY(bit, name, desc) [bit] = #name,
#include "trace/events.def"
};

static const char *const category_descs[30] = {
#define TRACE_CATEGORY(bit, name, desc) [bit] = (desc),
#include "trace/events.def"
};

static const char *const phase_names[] = {
#define TRACE_PHASE(num, name, desc) [num] = #name,
#include "trace/events.def"
};

const unsigned trace_phase_limit = sizeof phase_names / sizeof phase_names[0];

const struct trace_event_info *trace_event_info(uint16_t id)
{
    for (unsigned i = 0; i < EVENT_COUNT; i++)
        if (event_table[i].id == id)
            return &event_table[i];
    return NULL;
}

const struct trace_event_info *trace_event_table(unsigned *count)
{
    *count = EVENT_COUNT;
    return event_table;
}

const char *trace_category_name(unsigned bit)
{
    return bit < 30 ? category_names[bit] : NULL;
}

const char *trace_category_desc(unsigned bit)
{
    return bit < 30 ? category_descs[bit] : NULL;
}

const char *trace_phase_name(unsigned phase)
{
    return phase < trace_phase_limit ? phase_names[phase] : NULL;
}

const char *trace_kind_name(unsigned kind)
{
    static const char *const names[] = { "instant", "begin", "end" };
    return kind < 3 ? names[kind] : "instant";
}

void trace_refused(void)
{
    struct ring *r = trace_cur_ring();
    if (r)
        ring_refuse(r);
    else
        trace_no_ring();
}

void trace_no_ring(void)
{
    /* Locked add: a cold error path shared by all CPUs. */
    __atomic_fetch_add(&no_ring_events, 1, __ATOMIC_RELAXED);
}

uint64_t trace_no_ring_count(void)
{
    return __atomic_load_n(&no_ring_events, __ATOMIC_RELAXED);
}

/* ---- switches ----------------------------------------------------------- */

void trace_set_mask(uint32_t mask)
{
    __atomic_store_n(&trace_mask, mask, __ATOMIC_SEQ_CST);
}

uint32_t trace_get_mask(void)
{
    return __atomic_load_n(&trace_mask, __ATOMIC_RELAXED);
}

void trace_enable(bool on)
{
    if (on)
        __atomic_fetch_or(&trace_mask, TRACE_ENABLE, __ATOMIC_SEQ_CST);
    else
        __atomic_fetch_and(&trace_mask, ~TRACE_ENABLE, __ATOMIC_SEQ_CST);
}

void trace_set_categories(uint32_t cats)
{
    uint32_t old = __atomic_load_n(&trace_mask, __ATOMIC_RELAXED), want;
    do {
        want = (old & ~TRACE_CAT_BITS) | (cats & TRACE_CAT_BITS);
    } while (!__atomic_compare_exchange_n(&trace_mask, &old, want, false,
                                          __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
}

/* ---- parsing ------------------------------------------------------------ */

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Case-insensitive: does s[0..n) spell `name` exactly? */
static bool name_is(const char *s, size_t n, const char *name)
{
    size_t i = 0;
    for (; i < n && name[i]; i++)
        if (lower(s[i]) != lower(name[i]))
            return false;
    return i == n && name[i] == '\0';
}

/* The bits one name stands for, or -1 if it names nothing. */
static int64_t name_bits(const char *s, size_t n)
{
    if (name_is(s, n, "all"))
        return TRACE_CATS_ALL;
    if (name_is(s, n, "none"))
        return 0;
    for (unsigned bit = 0; bit < 30; bit++)
        if (category_names[bit] && name_is(s, n, category_names[bit]))
            return (int64_t)1 << bit;
    return -1;
}

int trace_parse_mask(const char *s, size_t len, uint32_t *cats,
                     const char **bad, size_t *bad_len)
{
    uint32_t bits = 0;
    size_t end = 0;
    while (end < len && s[end])
        end++;
    size_t at = 0;
    for (;;) {
        size_t n = 0;
        while (at + n < end && s[at + n] != ',')
            n++;
        int64_t b = name_bits(s + at, n);
        if (b < 0) {
            *bad = s + at;
            *bad_len = n;
            return -1;
        }
        bits |= (uint32_t)b;
        at += n;
        if (at >= end)
            break;
        at++;               /* the comma */
    }
    *cats = bits;
    return 0;
}

/* ---- pause ---------------------------------------------------------------- */

uint32_t trace_pause(void)
{
    uint32_t old = __atomic_load_n(&trace_mask, __ATOMIC_RELAXED), want;
    do {
        want = old & ~TRACE_ENABLE;
        if (old & TRACE_ENABLE)
            want |= TRACE_PAUSED;
        /* SEQ_CST (a locked cmpxchg): the new mask is globally visible
         * before this CPU goes on to read the rings' counters. */
    } while (!__atomic_compare_exchange_n(&trace_mask, &old, want, false,
                                          __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return old;
}

void trace_resume(uint32_t saved)
{
    __atomic_store_n(&trace_mask, saved & ~TRACE_PAUSED, __ATOMIC_SEQ_CST);
}

static void cpu_relax(void)
{
    __asm__ volatile("pause" : : : "memory");
}

unsigned trace_quiesce(struct ring *const rings[], unsigned n, uint64_t timeout_tsc)
{
    uint64_t start = trace_rdtsc();
    for (;;) {
        unsigned busy = 0;
        for (unsigned i = 0; i < n; i++)
            if (rings[i] && !ring_quiescent(rings[i]))
                busy++;
        if (busy == 0 || trace_rdtsc() - start >= timeout_tsc)
            return busy;
        cpu_relax();
    }
}
