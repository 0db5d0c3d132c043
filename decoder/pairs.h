/* pairs.h — one CPU's BEGIN/END slices, for the host decoder.
 *
 * The kernel's nesting rule itself (recorder/pairing.c, built into
 * libbtdecode.so beside this file) applied to a dump's records, with the
 * roles the dump's %T lines give (scripts/btlib/pairs.py builds them):
 * exactly what btlib.pairs.match_cpu returns, as indices.
 *
 *     size_t ns = bt_pair_cpu(roles, nroles, ev, n, begins, ends, unmatched, &nu);
 *     slice k: BEGIN ev[begins[k]], END ev[ends[k]], k in BEGIN order;
 *     unmatched[0..nu): the BEGINs and ENDs left without a partner, in
 *     ring order. */
#ifndef DECODER_PAIRS_H
#define DECODER_PAIRS_H
#include <stddef.h>
#include <stdint.h>
#include "recorder/pairing.h"

/* The most events one call takes (their indices must fit a u32 below
 * the scratch marks). */
#define BT_PAIR_MAX_EVENTS 0xFFFFFFF0u

/* ev[0..n): one CPU's records, ring order (n <= BT_PAIR_MAX_EVENTS).
 * begins and ends hold n / 2 indices each, unmatched n (it is also the
 * scratch). Returns the number of slices; *nunmatched gets the rest. */
size_t bt_pair_cpu(const struct pairing_role *roles, uint32_t nroles,
                   const struct trace_event *ev, size_t n, uint32_t *begins, uint32_t *ends,
                   uint32_t *unmatched, size_t *nunmatched);

/* bt_pair_cpu's results in arrays of their own (bt_pair_run). */
struct bt_pairing {
    uint32_t *begins, *ends, *unmatched;
    size_t nslices, nunmatched;
};

/* bt_pair_cpu over ev[0..n) into arrays it allocates; false (nothing to
 * free) when n is over BT_PAIR_MAX_EVENTS or memory runs out. Free the
 * arrays with bt_pair_free. */
_Bool bt_pair_run(const struct pairing_role *roles, uint32_t nroles,
                  const struct trace_event *ev, size_t n, struct bt_pairing *out);
void bt_pair_free(struct bt_pairing *p);

#endif
