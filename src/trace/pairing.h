/* pairing.h — the one BEGIN/END nesting rule, which turns one CPU's events
 * into durations (docs/dump-format.md, "BEGIN/END pairs"; the host's
 * scripts/btlib/pairs.py applies the same rule to a dump):
 *   a stack of open BEGINs, fed in ring order; an END closes the innermost
 *   open BEGIN of its pair (events.def TRACE_PAIR) with the same a0, the
 *   BEGINs above that one are given up, and an END with no such BEGIN is
 *   unmatched; a closed pair whose END's TSC is before its BEGIN's is no
 *   duration; past PAIRING_DEPTH open BEGINs the oldest is given up. */
#ifndef TRACE_PAIRING_H
#define TRACE_PAIRING_H
#include <stdbool.h>
#include <stdint.h>
#include "trace/event.h"

#define PAIRING_DEPTH 64

struct pairing {
    unsigned depth;
    struct { uint16_t begin; uint64_t a0, tsc; } open[PAIRING_DEPTH];
};

/* Empties the stack (before each CPU's events). */
void pairing_reset(struct pairing *p);
/* Feeds the CPU's next event; true when it closes a pair: *begin gets the
 * BEGIN's type and *ticks the duration. */
bool pairing_feed(struct pairing *p, const struct trace_event *ev, uint16_t *begin,
                  uint64_t *ticks);

#endif
