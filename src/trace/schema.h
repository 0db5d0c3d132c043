/* schema.h — the parts of the trace schema beside the event table:
 * BEGIN/END partners (TRACE_PAIR in events.def) and the workloads
 * (workloads.def). Both are generated from their .def files; dumps carry
 * them (pair= on %T lines, %W lines: docs/dump-format.md). */
#ifndef TRACE_SCHEMA_H
#define TRACE_SCHEMA_H
#include <stdint.h>

/* The partner of a BEGIN or END event type (its TRACE_PAIR), else 0. */
uint16_t trace_pair_of(uint16_t type);

/* a0 of WORKLOAD_BEGIN/END: WL_HWLAT = 1, ... */
enum workload_id {
#define WORKLOAD(id, ENUM, name, key, results, desc) WL_##ENUM = (id),
#include "trace/workloads.def"
};

/* One workloads.def entry. */
struct workload_decl {
    uint8_t     id;            /* enum workload_id */
    char        key;           /* hotkey */
    const char *name;          /* workload=NAME */
    const char *results;       /* "EVENT,EVENT" ("" = none) */
    const char *desc;
};

/* All workloads, in workloads.def order. */
enum { WORKLOAD_COUNT = 0
#define WORKLOAD(id, ENUM, name, key, results, desc) + 1
#include "trace/workloads.def"
};
extern const struct workload_decl workload_decl[WORKLOAD_COUNT];

#endif
