/* event.h — the trace event record and the identifiers of the event table.
 *
 * One event is exactly 32 bytes, two per cache line:
 *   u64 tsc     RDTSC when the event was recorded
 *   u32 seq     the CPU's event number (low 32 bits of its ring's reserve
 *               counter): a gap in seq is a lost event, visible in the data
 *   u16 type    TRACE_EV_* id from events.def
 *   u8  cpu     the low 8 bits of the dense CPU number (0 = BSP): a check
 *               that a slot belongs to its ring, stamped for free with the
 *               id word. The CPU's identity is its ring (struct ring's cpu,
 *               which the dump writes on each line as a varint): nothing
 *               reads this byte as the CPU number, so 1024 CPUs fit.
 *   u8  flags   free for the trace point (0 from trace())
 *   u64 a0, a1  arguments, named per type in events.def
 * The second word (seq, type, cpu, flags) is also reachable as one 64-bit
 * `id_word`: the ring stores it last, in one instruction (ring.h says why).
 *
 * The enums and per-event constants here are generated from events.def. */
#ifndef TRACE_EVENT_H
#define TRACE_EVENT_H
#include <stddef.h>
#include <stdint.h>

struct trace_event {
    uint64_t tsc;
    union {
        struct {
            uint32_t seq;
            uint16_t type;
            uint8_t cpu;
            uint8_t flags;
        };
        uint64_t id_word;    /* seq | type << 32 | cpu << 48 | flags << 56 */
    };
    uint64_t a0;
    uint64_t a1;
};

_Static_assert(sizeof(struct trace_event) == 32, "event record is 32 bytes");
_Static_assert(offsetof(struct trace_event, seq) == 8, "seq at byte 8");
_Static_assert(offsetof(struct trace_event, type) == 12, "type at byte 12");
_Static_assert(offsetof(struct trace_event, cpu) == 14, "cpu at byte 14");
_Static_assert(offsetof(struct trace_event, flags) == 15, "flags at byte 15");
_Static_assert(offsetof(struct trace_event, a0) == 16, "a0 at byte 16");

#define TRACE_ID_SEQ_SHIFT   0
#define TRACE_ID_TYPE_SHIFT  32
#define TRACE_ID_CPU_SHIFT   48
#define TRACE_ID_FLAGS_SHIFT 56
#define TRACE_ID_CPU_MASK    0xFFu    /* the record's cpu byte: low 8 bits */

/* Event kinds (column KIND of events.def). */
enum trace_kind { TRACE_KIND_INSTANT,
                  TRACE_KIND_BEGIN,
                  TRACE_KIND_END };

/* Retention (column RETENTION): RING events may be overwritten when the
 * ring wraps; PINNED ones are also kept in the CPU's boot log; RESULT
 * ones (a workload's results) in the CPU's results log (ring.h). */
enum trace_retention { TRACE_RET_RING,
                       TRACE_RET_PINNED,
                       TRACE_RET_RESULT };

/* Category bit numbers: TRACE_CAT_BOOT = 0, ... */
enum trace_category {
#define TRACE_CATEGORY(bit, name, desc) TRACE_CAT_##name = (bit),
#include "trace/events.def"
};

/* The mask bits of all categories together. */
enum trace_category_all {
    TRACE_CATMASK_ALL = 0
#define TRACE_CATEGORY(bit, name, desc) | (1 << (bit))
#include "trace/events.def"
};

/* Boot phases (a0 of BOOT_PHASE): TRACE_PHASE_ENTRY = 0, ... */
enum trace_phase {
#define TRACE_PHASE(num, name, desc) TRACE_PHASE_##name = (num),
#include "trace/events.def"
};

/* Event ids: TRACE_EV_BOOT_PHASE = 1, ... */
enum trace_event_id {
#define TRACE_EVENT(id, name, cat, kind, ret, a0, a1, desc) TRACE_EV_##name = (id),
#include "trace/events.def"
};

/* Per event, its category's mask bit and its retention, as compile-time
 * constants, so trace(NAME, ...) tests a constant mask:
 * TRACE_CATBIT_IRQ_TIMER_BEGIN == 1u << TRACE_CAT_IRQ. */
enum trace_event_catbit {
#define TRACE_EVENT(id, name, cat, kind, ret, a0, a1, desc) \
    TRACE_CATBIT_##name = 1u << TRACE_CAT_##cat,
#include "trace/events.def"
};
enum trace_event_retention {
#define TRACE_EVENT(id, name, cat, kind, ret, a0, a1, desc) \
    TRACE_RETAIN_##name = TRACE_RET_##ret,
#include "trace/events.def"
};

/* Each event id, category bit and phase number used once, checked by the
 * compiler: one enumerator per number, named by pasting the number from
 * events.def, so a number written twice is a redeclared enumerator
 * ("redeclaration of enumerator 'TRACE_UNIQUE_EVENT_ID_7'"). Numbers are
 * written in decimal without leading zeros (gen-event-docs parses them so
 * too), which makes equal numbers equal tokens. Never used at run time. */
enum trace_unique_event_ids {
#define TRACE_EVENT(id, name, cat, kind, ret, a0, a1, desc) TRACE_UNIQUE_EVENT_ID_##id,
#include "trace/events.def"
};
enum trace_unique_category_bits {
#define TRACE_CATEGORY(bit, name, desc) TRACE_UNIQUE_CATEGORY_BIT_##bit,
#include "trace/events.def"
};
enum trace_unique_phases {
#define TRACE_PHASE(num, name, desc) TRACE_UNIQUE_PHASE_##num,
#include "trace/events.def"
};

#endif
