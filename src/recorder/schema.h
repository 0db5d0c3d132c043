/* schema.h — the parts of the trace schema beside the event table:
 * BEGIN/END partners (TRACE_PAIR in events.def), cause -> effect flows
 * (TRACE_FLOW) and the workloads (workloads.def). All are generated from
 * their .def files; dumps carry them (pair= and flow= on %T lines, %W
 * lines: docs/dump-format.md). */
#ifndef RECORDER_SCHEMA_H
#define RECORDER_SCHEMA_H
#include <stdint.h>
#include "recorder/pairing.h"

/* The partner of a BEGIN or END event type (its TRACE_PAIR), else 0. */
uint16_t trace_pair_of(uint16_t type);

/* The effect of a flow's cause event type (its TRACE_FLOW), else 0. */
uint16_t trace_flow_of(uint16_t type);

/* The pairing roles (recorder/pairing.h) of events.def's types, by type id:
 * each TRACE_PAIR's BEGIN and END, keyed by the BEGIN's id; every other
 * type is an instant. */
extern const struct pairing_role trace_pair_roles[];
extern const uint32_t trace_pair_roles_count;

/* a0 of WORKLOAD_BEGIN/END: WL_HWLAT = 1, ... */
enum workload_id {
#define WORKLOAD(id, ENUM, name, key, results, desc) WL_##ENUM = (id),
#include "recorder/workloads.def"
};

/* One workloads.def entry. */
struct workload_decl {
    uint8_t id;            /* enum workload_id */
    char key;           /* hotkey */
    const char *name;          /* workload=NAME */
    const char *results;       /* "EVENT,EVENT" ("" = none) */
    const char *desc;
};

/* All workloads, in workloads.def order. */
enum { WORKLOAD_COUNT = 0
#define WORKLOAD(id, ENUM, name, key, results, desc) +1
#include "recorder/workloads.def"
};
extern const struct workload_decl workload_decl[WORKLOAD_COUNT];

#endif
