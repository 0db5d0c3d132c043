/* stats.h — the numbers behind `decode --stats`, from records, for the
 * host decoder (scripts/btlib/stats.py formats them; its Python code is
 * the reference and computes the same numbers without this library).
 *
 * It reads every CPU's records once, one CPU at a time (so that only one
 * CPU's records need be in memory), and gives:
 *   - the events per type, over all CPUs;
 *   - per CPU, its largest, first and last TSC and the distribution of the periods between
 *     successive timer events (the types marked `timer`);
 *   - per group, the distribution of BEGIN/END durations, the pairs found
 *     by the one nesting rule (recorder/pairing.c) with the caller's roles;
 *     a BEGIN type's group is its base name, numbered by the caller.
 * A distribution is count, min, median, p99 and max, percentiles by
 * nearest rank on the sorted values (stats.py nearest_rank). A period may
 * be negative (a TSC that went backwards): each value is a magnitude and
 * a sign, so that every value a u64 TSC difference can take is exact. */
#ifndef DECODER_STATS_H
#define DECODER_STATS_H
#include <stddef.h>
#include <stdint.h>
#include "recorder/pairing.h"

#define BT_STATS_TYPES    65536  /* type_counts[] entries: every u16 type */
#define BT_STATS_NO_GROUP 0xFFFF
#define BT_DIST_VALUES    4      /* min, median, p99, max */

/* What the caller knows about one event type. */
struct bt_stats_type {
    uint16_t group;              /* a BEGIN's durations group, or BT_STATS_NO_GROUP */
    uint8_t timer;              /* 1: its events are the timer ticks */
};

struct bt_stats_in {
    const struct pairing_role *roles;   /* pairing roles by type */
    uint32_t nroles;
    const struct bt_stats_type *types;  /* by type; types >= ntypes: neither */
    uint32_t ntypes;
    uint32_t ngroups;
};

/* count values; value[k] is -value[k] where negative[k]. */
struct bt_dist {
    uint64_t count;
    uint64_t value[BT_DIST_VALUES];
    uint8_t negative[BT_DIST_VALUES];
};

struct bt_cpu_stats {
    uint64_t max_tsc;            /* 0 for a CPU without events */
    uint64_t first_tsc, last_tsc;    /* its oldest and newest event's (ring order); 0, 0: none */
    struct bt_dist period;
};

/* A run over the CPUs of one dump: bt_stats_start() with every CPU's
 * event count n[0..ncpus) (the scratch is sized from them; type_counts,
 * BT_STATS_TYPES entries, is zeroed and counted into), bt_stats_cpu() for
 * CPU c's records ev[0..n[c]) in ring order, each CPU once, then
 * bt_stats_finish() for the groups (it frees the run). start returns NULL
 * when memory ran out; finish returns 0, or -1 when it ran out then or a
 * CPU was skipped or given the wrong count (nothing is then valid). */
struct bt_stats_run;
struct bt_stats_run *bt_stats_start(const struct bt_stats_in *in, const size_t *n, size_t ncpus,
                                    uint64_t *type_counts);
void bt_stats_cpu(struct bt_stats_run *r, size_t c, const struct trace_event *ev, size_t n,
                  struct bt_cpu_stats *cpu);
int bt_stats_finish(struct bt_stats_run *r, struct bt_dist *groups);

/* All of the above at once: ev[c][0..n[c]) for c < ncpus. Fills
 * type_counts[BT_STATS_TYPES], cpu[ncpus] and groups[in->ngroups].
 * Returns 0, or -1 when memory ran out (nothing is then valid). */
int bt_stats(const struct bt_stats_in *in, const struct trace_event *const *ev,
             const size_t *n, size_t ncpus, uint64_t *type_counts, struct bt_cpu_stats *cpu,
             struct bt_dist *groups);

#endif
