/* stats.c — counts, timer periods and BEGIN/END durations from records
 * in one pass per CPU (stats.h). */
#include "decoder/stats.h"
#include <stdlib.h>
#include <string.h>

#define RADIX_BITS    11
#define RADIX_BUCKETS (1u << RADIX_BITS)
#define RADIX_MASK    (RADIX_BUCKETS - 1)
#define DENSE_RANGE   (1u << 16)  /* order statistics by counting below this range */

typedef size_t histogram[RADIX_BUCKETS];

/* Scratch for all CPUs: durations with their group, the periods of one
 * CPU (positive from the start of `period`, negative from its end). */
struct scratch {
    uint64_t *dur, *sorted, *period, *tmp;
    uint16_t *group;
    size_t ndur, cap_period;
    size_t *dense;               /* DENSE_RANGE counters */
    histogram *hist;
};

/* Sorts v[0..n) ascending (tmp: n more): LSD radix sort, one pass per
 * digit, only over the digits in which the values differ. */
static void sort_u64(uint64_t *v, uint64_t *tmp, size_t n, histogram *hist)
{
    uint64_t any = 0, all = ~(uint64_t)0;
    for (size_t i = 0; i < n; i++) {
        any |= v[i];
        all &= v[i];
    }
    uint64_t *src = v, *dst = tmp;
    for (unsigned shift = 0; shift < 64; shift += RADIX_BITS) {
        if (!((any ^ all) >> shift & RADIX_MASK))
            continue;
        size_t *h = *hist, sum = 0;
        memset(h, 0, sizeof *hist);
        for (size_t i = 0; i < n; i++)
            h[src[i] >> shift & RADIX_MASK]++;
        for (unsigned b = 0; b < RADIX_BUCKETS; b++) {
            size_t c = h[b];
            h[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[h[src[i] >> shift & RADIX_MASK]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, n * sizeof *v);
}

/* out[j] = the value at 0-based position at[j] of v[0..n) sorted, for
 * ascending at[0..k). Values within DENSE_RANGE of each other are counted,
 * not sorted (timer periods and handler durations are); else v is sorted. */
static void order_stats(uint64_t *v, size_t n, const size_t *at, unsigned k, uint64_t *out,
                        struct scratch *s)
{
    if (k == 0 || n == 0)
        return;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    if (hi - lo >= DENSE_RANGE) {
        sort_u64(v, s->tmp, n, s->hist);
        for (unsigned j = 0; j < k; j++)
            out[j] = v[at[j]];
        return;
    }
    size_t *count = s->dense, seen = 0;
    memset(count, 0, (hi - lo + 1) * sizeof *count);
    for (size_t i = 0; i < n; i++)
        count[v[i] - lo]++;
    for (uint64_t x = 0, j = 0; j < k; x++)
        for (seen += count[x]; j < k && at[j] < seen; j++)
            out[j] = lo + x;
}

/* The 1-based nearest rank of pct on n values, as stats.py computes it:
 * max(1, ceil(pct / 100 * n)) in doubles. */
static size_t nearest_rank(unsigned pct, size_t n)
{
    double x = (double)pct / 100.0 * (double)n;
    size_t r = (size_t)x;
    if ((double)r < x)
        r++;
    return r ? r : 1;
}

/* d for the values -neg[0..nneg) and pos[0..npos) (count 0 for none). In
 * ascending order the negatives come first, largest magnitude first. */
static void distribution(uint64_t *neg, size_t nneg, uint64_t *pos, size_t npos,
                         struct scratch *s, struct bt_dist *d)
{
    size_t n = nneg + npos, at_neg[BT_DIST_VALUES], at_pos[BT_DIST_VALUES];
    size_t rank[BT_DIST_VALUES] = { 1, nearest_rank(50, n), nearest_rank(99, n), n };
    unsigned slot_neg[BT_DIST_VALUES], slot_pos[BT_DIST_VALUES], kn = 0, kp = 0;
    uint64_t got_neg[BT_DIST_VALUES], got_pos[BT_DIST_VALUES];
    memset(d, 0, sizeof *d);
    if (!n)
        return;
    d->count = n;
    for (unsigned j = BT_DIST_VALUES; j-- > 0;)        /* ascending magnitudes */
        if (rank[j] <= nneg) {
            at_neg[kn] = nneg - rank[j];
            slot_neg[kn++] = j;
        }
    for (unsigned j = 0; j < BT_DIST_VALUES; j++)
        if (rank[j] > nneg) {
            at_pos[kp] = rank[j] - 1 - nneg;
            slot_pos[kp++] = j;
        }
    order_stats(neg, nneg, at_neg, kn, got_neg, s);
    order_stats(pos, npos, at_pos, kp, got_pos, s);
    for (unsigned m = 0; m < kn; m++) {
        d->value[slot_neg[m]] = got_neg[m];
        d->negative[slot_neg[m]] = 1;
    }
    for (unsigned m = 0; m < kp; m++)
        d->value[slot_pos[m]] = got_pos[m];
}

static const struct bt_stats_type *type_of(const struct bt_stats_in *in, uint16_t type)
{
    static const struct bt_stats_type neither = { BT_STATS_NO_GROUP, 0 };
    return type < in->ntypes ? &in->types[type] : &neither;
}

/* One CPU: counts, its timer periods' distribution, its durations. */
static void scan_cpu(const struct bt_stats_in *in, const struct trace_event *ev, size_t n,
                     uint64_t *type_counts, struct bt_cpu_stats *out, struct scratch *s)
{
    struct pairing p;
    struct pairing_open begin;
    uint64_t max_tsc = 0, prev = 0;
    size_t npos = 0, nneg = 0;
    int ticked = 0;
    pairing_init(&p, in->roles, in->nroles, NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        const struct trace_event *e = &ev[i];
        type_counts[e->type]++;
        max_tsc = e->tsc > max_tsc ? e->tsc : max_tsc;
        if (type_of(in, e->type)->timer) {
            if (ticked && e->tsc >= prev)
                s->period[npos++] = e->tsc - prev;
            else if (ticked)
                s->period[s->cap_period - ++nneg] = prev - e->tsc;
            prev = e->tsc;
            ticked = 1;
        }
        if (pairing_feed(&p, e, (uint32_t)i, &begin)) {
            uint16_t g = type_of(in, begin.type)->group;
            if (g < in->ngroups) {
                s->group[s->ndur] = g;
                s->dur[s->ndur++] = e->tsc - begin.tsc;
            }
        }
    }
    out->max_tsc = max_tsc;
    out->first_tsc = n ? ev[0].tsc : 0;
    out->last_tsc = n ? ev[n - 1].tsc : 0;
    distribution(s->period + s->cap_period - nneg, nneg, s->period, npos, s, &out->period);
}

/* Each group's durations together (a counting sort by group, when there
 * are several), then their distributions. */
static int group_durations(const struct bt_stats_in *in, struct scratch *s,
                           struct bt_dist *groups)
{
    if (in->ngroups == 1) {
        distribution(NULL, 0, s->dur, s->ndur, s, &groups[0]);
        return 0;
    }
    size_t *start = calloc(in->ngroups + 1, sizeof *start);
    if (!start)
        return -1;
    for (size_t i = 0; i < s->ndur; i++)
        start[s->group[i] + 1]++;
    for (uint32_t g = 0; g < in->ngroups; g++)
        start[g + 1] += start[g];
    for (size_t i = 0; i < s->ndur; i++)
        s->sorted[start[s->group[i]]++] = s->dur[i];
    size_t at = 0;
    for (uint32_t g = 0; g < in->ngroups; at = start[g++])
        distribution(NULL, 0, s->sorted + at, start[g] - at, s, &groups[g]);
    free(start);
    return 0;
}

struct bt_stats_run {
    const struct bt_stats_in *in;
    uint64_t *type_counts;
    const size_t *n;             /* each CPU's count, as given to start */
    size_t ncpus, done;          /* CPUs given; done counts those given right */
    struct scratch s;
};

static void free_scratch(struct scratch *s)
{
    free(s->dur);
    free(s->sorted);
    free(s->tmp);
    free(s->period);
    free(s->group);
    free(s->hist);
    free(s->dense);
}

struct bt_stats_run *bt_stats_start(const struct bt_stats_in *in, const size_t *n, size_t ncpus,
                                    uint64_t *type_counts)
{
    size_t total = 0, most = 1;
    for (size_t c = 0; c < ncpus; c++) {
        total += n[c];
        most = n[c] > most ? n[c] : most;
    }
    size_t ndur_max = total / 2 + 1;
    struct bt_stats_run *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    struct scratch *s = &r->s;
    s->cap_period = most;
    s->dur = malloc(ndur_max * sizeof *s->dur);
    s->sorted = malloc(ndur_max * sizeof *s->sorted);
    s->tmp = malloc((ndur_max > most ? ndur_max : most) * sizeof *s->tmp);
    s->period = malloc(most * sizeof *s->period);
    s->group = malloc(ndur_max * sizeof *s->group);
    s->hist = malloc(sizeof *s->hist);
    s->dense = malloc(DENSE_RANGE * sizeof *s->dense);
    if (!(s->dur && s->sorted && s->tmp && s->period && s->group && s->hist && s->dense)) {
        free_scratch(s);
        free(r);
        return NULL;
    }
    memset(type_counts, 0, BT_STATS_TYPES * sizeof *type_counts);
    r->in = in;
    r->type_counts = type_counts;
    r->n = n;
    r->ncpus = ncpus;
    return r;
}

void bt_stats_cpu(struct bt_stats_run *r, size_t c, const struct trace_event *ev, size_t n,
                  struct bt_cpu_stats *cpu)
{
    if (c >= r->ncpus || n != r->n[c])
        return;                  /* the scratch was not sized for it: finish says -1 */
    scan_cpu(r->in, ev, n, r->type_counts, cpu, &r->s);
    r->done++;
}

int bt_stats_finish(struct bt_stats_run *r, struct bt_dist *groups)
{
    int status = r->done == r->ncpus ? group_durations(r->in, &r->s, groups) : -1;
    free_scratch(&r->s);
    free(r);
    return status;
}

int bt_stats(const struct bt_stats_in *in, const struct trace_event *const *ev,
             const size_t *n, size_t ncpus, uint64_t *type_counts, struct bt_cpu_stats *cpu,
             struct bt_dist *groups)
{
    struct bt_stats_run *r = bt_stats_start(in, n, ncpus, type_counts);
    if (!r)
        return -1;
    for (size_t c = 0; c < ncpus; c++)
        bt_stats_cpu(r, c, ev[c], n[c], &cpu[c]);
    return bt_stats_finish(r, groups);
}
