/* wlargs.h — the text that names a workload and sets its parameters:
 *
 *     NAME[:KEY=VALUE[,KEY=VALUE...]]        e.g.  hwlat:width=200,thresh=5
 *
 * as given by workload= on the kernel command line. VALUE is a decimal
 * number in the parameter's unit, or for a CPU-list parameter (cpus=) a
 * list of CPU numbers and ranges, "0-15" or "0,8,16-23": a comma followed
 * by a digit continues the list, any other comma starts the next pair
 * (c2c:cpus=0,8,16-23,samples=4). Pure code, tested on the host. */
#ifndef PERF_WLARGS_H
#define PERF_WLARGS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WL_MAX_PARAMS 8

struct wl_param {
    const char *key;            /* NULL ends a table */
    const char *unit;           /* "ms", "us", "" ... (for messages) */
    uint64_t dflt, min, max;
    /* A CPU list: its value is how many CPUs it names (0: not given), the
     * set is in cpus. */
    bool cpu_list;
};

/* The CPUs a cpu_list parameter named (CPU numbers below MAX_CPUS). */
struct wl_cpus {
    uint64_t bits[(MAX_CPUS + 63) / 64];
};

static inline bool wl_cpus_has(const struct wl_cpus *c, uint32_t cpu)
{
    return cpu < MAX_CPUS && (c->bits[cpu / 64] >> (cpu % 64) & 1);
}

typedef void (*wl_warn_fn)(void *ctx, const char *msg);

/* Copies the NAME part of `text` into name (cap bytes, NUL-terminated);
 * false when it is empty or does not fit. */
bool wlargs_name(const char *text, char *name, size_t cap);

/* Sets values[i] to params[i].dflt (and *cpus to none), then applies
 * every KEY=VALUE of `text` (the part after ':'). An unknown key, a
 * malformed pair, a value out of [min, max] or a CPU list with a CPU
 * number of MAX_CPUS or more is reported through warn(ctx, message) naming
 * the workload, the pair and what is used instead, and leaves the default.
 * `cpus` may be NULL when params has no cpu_list parameter. Returns the
 * number of warnings. */
unsigned wlargs_apply(const char *text, const struct wl_param *params, uint64_t *values,
                      struct wl_cpus *cpus, wl_warn_fn warn, void *ctx);

#endif
