/* trace.h — the trace point and the global trace switches.
 *
 *     trace(IRQ_TIMER_BEGIN, tick, lateness);
 *
 * NAME is an event name from events.def (without TRACE_EV_). Cost when the
 * event's category is off: one load of trace_mask, one bit test and a
 * predicted branch.
 * When on: RDTSC plus ring_write (ring.h) on the calling CPU's own ring.
 * Both are trace_emit_at below, the one decision every trace point makes;
 * a caller that stores its own TSC or flags (the stress workload) calls it
 * directly.
 *
 * trace_mask: bit 31 TRACE_ENABLE (tracing on), bit 30 TRACE_PAUSED (set
 * by trace_pause instead of ENABLE while a dump or clear holds the rings,
 * so refused events are counted), bits 0..29 one per category
 * (1u << TRACE_CAT_x). An event is recorded when ENABLE and its category
 * bit are both set.
 *
 * The current CPU's ring: in the kernel gs:8 (percpu.h), which every CPU
 * must point at an initialised ring (or NULL) before it first traces; with
 * -DHOST_BUILD a thread-local pointer (trace_host_ring) so host tests and
 * benchmarks can run one writer thread per core. */
#ifndef TRACE_TRACE_H
#define TRACE_TRACE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace/event.h"
#include "trace/ring.h"

#define TRACE_ENABLE   (1u << 31)
#define TRACE_PAUSED   (1u << 30)
#define TRACE_CAT_BITS (TRACE_PAUSED - 1)   /* bits a category may use */

/* Every category defined in events.def, as mask bits. */
#define TRACE_CATS_ALL ((uint32_t)TRACE_CATMASK_ALL)

extern uint32_t trace_mask;

#ifdef HOST_BUILD
extern _Thread_local struct ring *trace_host_ring;
static inline struct ring *trace_cur_ring(void) { return trace_host_ring; }
#else
#include "arch/percpu.h"
static inline struct ring *trace_cur_ring(void) { return this_cpu_ring(); }
#endif

static inline uint64_t trace_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* Cold paths, out of line to keep each trace point small. */
void trace_refused(void);      /* paused: count on this CPU's ring */
void trace_no_ring(void);      /* this CPU has no ring: count globally */

#define trace(NAME, a0, a1)                                                \
    trace_emit_(TRACE_EV_##NAME, TRACE_CATBIT_##NAME, TRACE_RETAIN_##NAME, \
                (uint64_t)(a0), (uint64_t)(a1))

/* What became of one trace point. */
enum trace_outcome {
    TRACE_OFF,          /* category or tracing off (or no ring): not counted on a ring */
    TRACE_RECORDED,     /* written into this CPU's ring */
    TRACE_REFUSED,      /* tracing paused: counted as refused on this CPU's ring */
};

/* The trace point's one decision, for every trace point: records event
 * `type` of category bit `catbit` with the given flags byte, TSC and
 * arguments on the calling CPU's ring when tracing and the category are
 * on, counts it as refused while tracing is paused, and as seen on no ring
 * when this CPU has none. `retain` (enum trace_retention, a constant):
 * also copy it into the boot log (PINNED) or the results log (RESULT).
 * tsc TRACE_TSC_NOW reads the TSC only once the event is to be recorded,
 * so a disabled trace point never reads the clock (a value computed in
 * the argument list would be: RDTSC is volatile and stays where it is
 * written). A caller that must know the stored TSC beforehand (the stress
 * workload's checksum) passes its own, never 0. */
#define TRACE_TSC_NOW 0

static inline __attribute__((always_inline)) enum trace_outcome
trace_emit_at(uint16_t type, uint32_t catbit, int retain, uint8_t flags,
              uint64_t tsc, uint64_t a0, uint64_t a1)
{
    /* The one load: relaxed is a plain mov, and it is re-read at every
     * trace point, so a pause takes effect at the next one. */
    uint32_t m = __atomic_load_n(&trace_mask, __ATOMIC_RELAXED);
    /* Category off: one test of a constant bit, and done. ENABLE and
     * PAUSED are looked at only for a category that is on. */
    if (!(m & catbit))
        return TRACE_OFF;
    if (__builtin_expect((int32_t)m < 0, 1)) {      /* TRACE_ENABLE is the sign bit */
        struct ring *r = trace_cur_ring();
        if (__builtin_expect(r == NULL, 0)) {
            trace_no_ring();
            return TRACE_OFF;
        }
        if (tsc == TRACE_TSC_NOW)
            tsc = trace_rdtsc();
        if (retain == TRACE_RET_PINNED)
            ring_write_pinned(r, tsc, type, flags, a0, a1);
        else if (retain == TRACE_RET_RESULT)
            ring_write_result(r, tsc, type, flags, a0, a1);
        else
            ring_write(r, tsc, type, flags, a0, a1);
        return TRACE_RECORDED;
    }
    if (__builtin_expect(m & TRACE_PAUSED, 0)) {
        trace_refused();
        return TRACE_REFUSED;
    }
    return TRACE_OFF;
}

/* trace(): flags 0, the TSC read at the moment of recording. */
static inline __attribute__((always_inline)) void
trace_emit_(uint16_t type, uint32_t catbit, int retain, uint64_t a0, uint64_t a1)
{
    (void)trace_emit_at(type, catbit, retain, 0, TRACE_TSC_NOW, a0, a1);
}

_Static_assert(TRACE_ENABLE == 1u << 31, "trace_emit_at tests ENABLE as the sign bit");

/* ---- switches (not the fast path; any CPU) --------------------------- */
void trace_set_mask(uint32_t mask);          /* whole word */
uint32_t trace_get_mask(void);
void trace_enable(bool on);                  /* ENABLE bit only */
void trace_set_categories(uint32_t cats);    /* category bits only */

/* Parses `len` bytes of s (stops early at a NUL): comma-separated
 * category names (case-insensitive), "all" or "none", e.g. "irq,ipi".
 * Returns 0 and the category bits in *cats, or -1 with *bad / *bad_len
 * naming the first unknown (or empty) name, so the caller can print
 *   trace: unknown category 'xyz' (known: all none boot smp irq ...)
 * using trace_category_name() to list the known ones. */
int trace_parse_mask(const char *s, size_t len, uint32_t *cats,
                     const char **bad, size_t *bad_len);

/* ---- names (from events.def) ------------------------------------------ */
struct trace_event_info {
    uint16_t id;
    uint8_t category;      /* bit number */
    uint8_t kind;          /* enum trace_kind */
    uint8_t retention;     /* enum trace_retention */
    uint8_t signed_args;   /* TRACE_ARG0_SIGNED | TRACE_ARG1_SIGNED */
    const char *name, *arg0, *arg1, *desc;   /* arg names without the "s:" mark */
};
#define TRACE_ARG0_SIGNED 1u
#define TRACE_ARG1_SIGNED 2u

const struct trace_event_info *trace_event_info(uint16_t id);   /* or NULL */
const struct trace_event_info *trace_event_table(unsigned *count);
const char *trace_category_name(unsigned bit);   /* "IRQ", or NULL */
const char *trace_category_desc(unsigned bit);   /* or NULL */
const char *trace_phase_name(unsigned phase);    /* "ACPI", or NULL */
const char *trace_kind_name(unsigned kind);      /* "instant" | "begin" | "end" */
extern const unsigned trace_phase_limit;         /* phases are < this */

/* ---- pause for a dump or a clear ------------------------------------- */
/* Stops new events on every CPU: clears ENABLE (setting PAUSED if tracing
 * was on, so refused events are counted) with a full barrier, and returns
 * the previous mask for trace_resume(). Writers that already passed the
 * check finish their event: wait for them with trace_quiesce. Not nested:
 * one pause at a time (snapshot.c, the only caller, serialises). */
uint32_t trace_pause(void);
void trace_resume(uint32_t saved);

/* Spins until every non-NULL ring in rings[0..n) is quiescent or
 * timeout_tsc TSC ticks have passed. Returns how many are still busy;
 * their in-flight events are excluded (and counted) by the snapshot. */
unsigned trace_quiesce(struct ring *const rings[], unsigned n, uint64_t timeout_tsc);

/* Events traced on a CPU whose ring pointer was NULL (should stay 0). */
uint64_t trace_no_ring_count(void);

#endif
