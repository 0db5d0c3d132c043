/* pairing.h — the one BEGIN/END nesting rule, which turns one CPU's events
 * into durations (docs/dump-format.md, "BEGIN/END pairs"). The kernel's
 * `s` summary and the host's decoder (decoder/pairs.c, built into
 * libbtdecode.so for scripts/btlib/pairs.py) both run this file:
 *   a stack of open BEGINs, fed in ring order; an END closes the innermost
 *   open BEGIN of its pair with the same a0, the BEGINs above that one stay
 *   open (their pairs cross it: B1 B2 E1 E2), and an END with no such
 *   BEGIN is given up; a closed pair
 *   whose END's TSC is before its BEGIN's is no duration (both are given
 *   up); past PAIRING_DEPTH open BEGINs the oldest is given up.
 *
 * What pairs with what is the caller's table of roles, one per event type:
 * the kernel's comes from events.def's TRACE_PAIR (trace_pair_roles in
 * recorder/schema.h), the host's from the dump's %T lines. A BEGIN and an END
 * are partners when their roles have the same key.
 *
 *     struct pairing p;
 *     pairing_init(&p, roles, nroles, NULL, NULL);
 *     for each CPU: pairing_reset(&p); for each event i, in ring order:
 *         if (pairing_feed(&p, &ev, i, &begin)) ... ev closes begin ...
 * A given_up callback (may be NULL) hears the index of every BEGIN and END
 * left without a partner, when it is given up; pairing_reset gives up the
 * BEGINs still open. */
#ifndef RECORDER_PAIRING_H
#define RECORDER_PAIRING_H
#include <stdbool.h>
#include <stdint.h>
#include "trace/event.h"

#define PAIRING_DEPTH 64

/* The role of one event type. */
struct pairing_role {
    uint32_t key;                /* the same for a BEGIN and its END */
    uint8_t kind;               /* enum trace_kind; INSTANT pairs with nothing */
};

/* An open BEGIN. */
struct pairing_open {
    uint64_t a0, tsc;
    uint32_t index;              /* as given to pairing_feed */
    uint32_t key;
    uint16_t type;
};

struct pairing {
    const struct pairing_role *roles;   /* by type; types >= nroles are instants */
    uint32_t nroles;
    void (*given_up)(void *ctx, uint32_t index);
    void *ctx;
    unsigned depth;
    struct pairing_open open[PAIRING_DEPTH];
};

/* Sets the roles and the optional given_up callback; the stack starts empty. */
void pairing_init(struct pairing *p, const struct pairing_role *roles, uint32_t nroles,
                  void (*given_up)(void *ctx, uint32_t index), void *ctx);
/* Gives up the BEGINs still open and empties the stack (before or after
 * each CPU's events). */
void pairing_reset(struct pairing *p);
/* Feeds the CPU's next event, its position `index`; true when it closes a
 * pair: *begin gets the BEGIN it closes (its duration: ev->tsc - begin->tsc). */
bool pairing_feed(struct pairing *p, const struct trace_event *ev, uint32_t index,
                  struct pairing_open *begin);

#endif
