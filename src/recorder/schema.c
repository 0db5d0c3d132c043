/* schema.c — BEGIN/END partners and workload declarations, generated from
 * events.def and workloads.def. */
#include "recorder/schema.h"
#include "trace/event.h"

/* Each event's kind as a constant, so that a TRACE_PAIR naming an event
 * of the wrong kind fails to compile. */
enum pair_kind_check {
#define TRACE_EVENT(id, name, cat, kind, ret, a0, a1, desc) KIND_OF_##name = TRACE_KIND_##kind,
#include "trace/events.def"
};

#define TRACE_PAIR(b, e)                                                                   \
    _Static_assert((int)KIND_OF_##b == (int)TRACE_KIND_BEGIN, #b " is not a BEGIN event"); \
    _Static_assert((int)KIND_OF_##e == (int)TRACE_KIND_END, #e " is not an END event");
#include "trace/events.def"

static const struct {
    uint16_t begin, end;
} pairs[] = {
#define TRACE_PAIR(b, e) { TRACE_EV_##b, TRACE_EV_##e },
#include "trace/events.def"
};

uint16_t trace_pair_of(uint16_t type)
{
    for (unsigned i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        if (pairs[i].begin == type)
            return pairs[i].end;
        if (pairs[i].end == type)
            return pairs[i].begin;
    }
    return 0;
}

/* A TRACE_FLOW links two instants: anything else fails to compile. */
#define TRACE_FLOW(c, e)                                                                        \
    _Static_assert((int)KIND_OF_##c == (int)TRACE_KIND_INSTANT, #c " is not an INSTANT event"); \
    _Static_assert((int)KIND_OF_##e == (int)TRACE_KIND_INSTANT, #e " is not an INSTANT event");
#include "trace/events.def"

static const struct {
    uint16_t cause, effect;
} flows[] = {
#define TRACE_FLOW(c, e) { TRACE_EV_##c, TRACE_EV_##e },
#include "trace/events.def"
    { 0, 0 }                   /* keeps the array non-empty without flows */
};

uint16_t trace_flow_of(uint16_t type)
{
    for (unsigned i = 0; flows[i].cause; i++)
        if (flows[i].cause == type)
            return flows[i].effect;
    return 0;
}

const struct pairing_role trace_pair_roles[] = {
#define TRACE_PAIR(b, e) [TRACE_EV_##b] = { TRACE_EV_##b, TRACE_KIND_BEGIN }, \
                         [TRACE_EV_##e] = { TRACE_EV_##b, TRACE_KIND_END },
#include "trace/events.def"
};
const uint32_t trace_pair_roles_count = sizeof trace_pair_roles / sizeof trace_pair_roles[0];

const struct workload_decl workload_decl[WORKLOAD_COUNT] = {
#define WORKLOAD(id, ENUM, name, key, results, desc) { id, key, #name, results, desc },
#include "recorder/workloads.def"
};

/* Two workloads with one id or one key fail to compile: duplicate case
 * labels. Never called. */
static inline void workload_ids_and_keys_are_unique(int v)
{
    switch (v) {
#define WORKLOAD(id, ENUM, name, key, results, desc) case id:
#include "recorder/workloads.def"
        break;
    }
    switch (v) {
#define WORKLOAD(id, ENUM, name, key, results, desc) case key:
#include "recorder/workloads.def"
        break;
    }
}
