/* wlargs.h — the text that names a workload and sets its parameters:
 *
 *     NAME[:KEY=VALUE[,KEY=VALUE...]]        e.g.  hwlat:width=200,thresh=5
 *
 * as given by workload= on the kernel command line. VALUE is a decimal
 * number in the parameter's unit. Pure code, tested on the host. */
#ifndef PERF_WLARGS_H
#define PERF_WLARGS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WL_MAX_PARAMS 8

struct wl_param {
    const char *key;            /* NULL ends a table */
    const char *unit;           /* "ms", "us", "" ... (for messages) */
    uint64_t    dflt, min, max;
};

typedef void (*wl_warn_fn)(void *ctx, const char *msg);

/* Copies the NAME part of `text` into name (cap bytes, NUL-terminated);
 * false when it is empty or does not fit. */
bool wlargs_name(const char *text, char *name, size_t cap);

/* Sets values[i] to params[i].dflt, then applies every KEY=VALUE of
 * `text` (the part after ':'). An unknown key, a malformed pair or a value
 * out of [min, max] is reported through warn(ctx, message) naming the
 * workload, the pair and what is used instead, and leaves the default.
 * Returns the number of warnings. */
unsigned wlargs_apply(const char *text, const struct wl_param *params, uint64_t *values,
                      wl_warn_fn warn, void *ctx);

#endif
