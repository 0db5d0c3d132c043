/* test_kmerge.c — the chunked k-way merge (decoder/kmerge.c) under the
 * sanitizers: for random rings (ties across CPUs, rings out of order,
 * empty ones) it must hand out exactly the order bt_merge_order() gives
 * the CPUs' records joined CPU after CPU (merge.h's stable order), at any
 * chunk size, also when rings in order are given a small window at a
 * time (each window a buffer of its own, so ASan sees any read past it),
 * and bt_scan() must find the TSC range, the types, and whether a ring
 * is in order and its seqs consecutive. Source c is CPU c * 257 (above 255
 * from c = 1; its records keep the low 8 bits, c): the merge hands out
 * each event's whole CPU number. The comparison with Python's sort, CPUs
 * whose records share a byte included, is test/host/test_kmerge.py. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "decoder/kmerge.h"
#include "decoder/merge.h"

#define MAX_CPUS_HERE 9
#define MAX_RING      40
#define ROUNDS        400

static struct trace_event all[MAX_CPUS_HERE * MAX_RING];
static uint32_t want[MAX_CPUS_HERE * MAX_RING], tmp[MAX_CPUS_HERE * MAX_RING];
static uint32_t orders[MAX_CPUS_HERE][MAX_RING], otmp[MAX_RING];
static struct trace_event got[MAX_CPUS_HERE * MAX_RING];
static uint64_t idx[MAX_CPUS_HERE * MAX_RING];
static uint32_t got_cpu[MAX_CPUS_HERE * MAX_RING];
#define CPU_OF(c) ((uint32_t)(c) * 257)     /* low 8 bits: c */
static struct bt_scan scan;
static size_t cpu_base[MAX_CPUS_HERE], window[MAX_CPUS_HERE];     /* window 0: whole */
static struct trace_event *win_buf[MAX_CPUS_HERE];

static uint64_t rnd_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(uint32_t n)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (uint32_t)(rnd_state % n);
}

/* Fills all[] with ncpu random rings; returns the total, ring sizes in n[]. */
static size_t make_rings(size_t ncpu, size_t *n)
{
    size_t total = 0;
    for (size_t c = 0; c < ncpu; c++) {
        n[c] = rnd(4) == 0 ? 0 : rnd(MAX_RING + 1);
        int in_order = rnd(3) != 0;
        uint64_t tsc = rnd(5);
        for (size_t i = 0; i < n[c]; i++) {
            struct trace_event *e = &all[total + i];
            memset(e, 0, sizeof *e);
            tsc += in_order ? rnd(3) : 0;
            e->tsc = in_order ? tsc : rnd(8);
            e->cpu = (uint8_t)CPU_OF(c);
            e->seq = rnd(6) == 0 ? UINT32_MAX - rnd(2) : (uint32_t)i;
            e->type = (uint16_t)rnd(70000);
            e->a0 = total + i;                      /* tells equal keys apart */
        }
        total += n[c];
    }
    return total;
}

/* Gives source s (CPU c) its records from lo, window[c] of them at most,
 * in a buffer of exactly that size. */
static void load_window(struct bt_kmerge_src *s, size_t c, uint64_t lo)
{
    uint64_t hi = lo + window[c] < s->n ? lo + window[c] : s->n;
    free(win_buf[c]);
    win_buf[c] = malloc((hi - lo) * sizeof *win_buf[c]);
    CHECK(win_buf[c] != NULL);
    memcpy(win_buf[c], &all[cpu_base[c] + lo], (hi - lo) * sizeof *win_buf[c]);
    s->ev = win_buf[c];
    s->lo = lo;
    s->hi = hi;
}

static void check_round(size_t ncpu)
{
    size_t n[MAX_CPUS_HERE], total = make_rings(ncpu, n), base = 0;
    struct bt_kmerge_src src[MAX_CPUS_HERE];
    struct bt_kmerge_head heap[MAX_CPUS_HERE];
    bt_merge_order(all, total, want, tmp);
    bt_scan_init(&scan);
    for (size_t c = 0; c < ncpu; c++) {
        bt_scan(&all[base], n[c], &scan);
        bt_merge_order(&all[base], n[c], orders[c], otmp);
        int sorted = 1, consecutive = 1;
        for (size_t i = 0; i < n[c]; i++) {
            sorted &= orders[c][i] == i;
            if (i)
                consecutive &= all[base + i].seq == all[base + i - 1].seq + 1ull;
        }
        CHECK_EQ(scan.sorted, sorted);
        CHECK_EQ(scan.consecutive, consecutive);
        src[c] = (struct bt_kmerge_src){ .ev = &all[base], .n = n[c], .base = base, .order = scan.sorted ? NULL : orders[c], .lo = 0, .hi = n[c], .cpu = CPU_OF(c) };
        cpu_base[c] = base;
        window[c] = scan.sorted && n[c] && rnd(2) ? 1 + rnd(5) : 0;
        if (window[c])
            load_window(&src[c], c, 0);
        base += n[c];
    }
    CHECK_EQ(scan.events, total);
    struct bt_kmerge m;
    bt_kmerge_init(&m, src, ncpu, heap);
    size_t chunk = 1 + rnd(7), k = 0, got_n;
    while ((got_n = bt_kmerge_next(&m, &got[k], &got_cpu[k], &idx[k], chunk)) > 0 ||
           m.starved) {
        k += got_n;
        if (m.starved) {
            size_t c = m.starved - 1;
            CHECK(window[c] != 0 && src[c].at == src[c].hi && src[c].at < src[c].n);
            load_window(&src[c], c, src[c].hi);
            bt_kmerge_refill(&m, c);
        }
    }
    for (size_t c = 0; c < ncpu; c++) {
        free(win_buf[c]);
        win_buf[c] = NULL;
    }
    CHECK_EQ(k, total);
    for (size_t i = 0; i < total; i++) {
        CHECK_EQ(idx[i], want[i]);
        CHECK(!memcmp(&got[i], &all[want[i]], sizeof got[i]));
        size_t c = 0;
        while (c + 1 < ncpu && cpu_base[c + 1] <= want[i])
            c++;
        CHECK_EQ(got_cpu[i], CPU_OF(c));
        CHECK(scan.min_tsc <= all[i].tsc && all[i].tsc <= scan.max_tsc);
        CHECK(scan.types[all[i].type]);
    }
}

static void test_empty(void)
{
    struct bt_kmerge m;
    struct bt_kmerge_head heap[1];
    bt_kmerge_init(&m, NULL, 0, heap);
    CHECK_EQ(bt_kmerge_next(&m, got, NULL, NULL, 4), 0);
    bt_scan_init(&scan);
    bt_scan(all, 0, &scan);
    CHECK(scan.sorted && scan.events == 0 && scan.min_tsc == UINT64_MAX);
}

int main(void)
{
    test_empty();
    for (int r = 0; r < ROUNDS; r++)
        check_round(1 + rnd(MAX_CPUS_HERE));
    return check_summary("test_kmerge");
}
