/* test_baselines.c — the baseline trace designs of the benchmark
 * (src/perf/baselines.h) record what they claim, so the bench compares
 * working designs: contents, drops on a held lock, validation order. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "perf/baselines.h"

#define CAP 8

static struct trace_event spin_slots[CAP] __attribute__((aligned(64)));
static struct trace_event global_slots[CAP] __attribute__((aligned(64)));
static struct bl_wide_entry wide_slots[CAP] __attribute__((aligned(64)));

static void test_spin(void)
{
    struct bl_spin_ring r;
    bl_spin_init(&r, spin_slots, CAP, 3);
    for (uint64_t i = 0; i < CAP + 2; i++)
        bl_spin_write(&r, 31, i, ~i);
    CHECK_EQ(r.head, CAP + 2);
    CHECK_EQ(r.drops, 0);
    CHECK_EQ(r.lock, 0);                                   /* released */
    const struct trace_event *e = &spin_slots[(CAP + 1) & (CAP - 1)];
    CHECK(e->seq == CAP + 1 && e->type == 31 && e->cpu == 3 && e->a0 == CAP + 1 &&
          e->a1 == ~(uint64_t)(CAP + 1) && e->tsc != 0);
    r.lock = 1;                                            /* a nested writer finds it held */
    bl_spin_write(&r, 31, 99, 0);
    CHECK_EQ(r.drops, 1);
    CHECK_EQ(r.head, CAP + 2);                             /* dropped, not written */
}

/* (a'): seqs come from the one global counter, shared by every ring. */
static void test_strat9(void)
{
    static struct trace_event other[CAP] __attribute__((aligned(64)));
    struct bl_spin_ring a, b;
    bl_spin_init(&a, spin_slots, CAP, 1);
    bl_spin_init(&b, other, CAP, 2);
    uint64_t s0 = bl_global_seq;
    bl_strat9_write(&a, 31, 1, 0);
    bl_strat9_write(&b, 31, 2, 0);
    bl_strat9_write(&a, 31, 3, 0);
    CHECK_EQ(bl_global_seq, s0 + 3);
    CHECK(spin_slots[0].seq == (uint32_t)s0 && spin_slots[0].a0 == 1 && spin_slots[0].cpu == 1);
    CHECK(other[0].seq == (uint32_t)(s0 + 1) && other[0].cpu == 2);
    CHECK(spin_slots[1].seq == (uint32_t)(s0 + 2) && spin_slots[1].a0 == 3);
    CHECK_EQ(a.head, 2);
    CHECK_EQ(a.lock, 0);
    a.lock = 1;                                            /* held: dropped, no seq taken */
    bl_strat9_write(&a, 31, 4, 0);
    CHECK_EQ(a.drops, 1);
    CHECK_EQ(bl_global_seq, s0 + 3);
}

static void test_global(void)
{
    struct bl_global_ring g;
    bl_global_init(&g, global_slots, CAP);
    bl_global_write(&g, 1, 31, 10, 11);
    bl_global_write(&g, 2, 31, 20, 21);
    CHECK_EQ(g.head, 2);
    CHECK(global_slots[0].cpu == 1 && global_slots[0].a0 == 10 && global_slots[0].seq == 0);
    CHECK(global_slots[1].cpu == 2 && global_slots[1].a1 == 21 && global_slots[1].seq == 1);
    CHECK(global_slots[1].tsc >= global_slots[0].tsc);
}

static void test_wide(void)
{
    struct bl_wide_ring r;
    memset(wide_slots, 0xAB, sizeof wide_slots);
    bl_wide_init(&r, wide_slots, CAP, 7);
    bl_wide_write(&r, 31, 5, 6);
    const struct bl_wide_entry *e = &wide_slots[0];
    CHECK(e->tsc != BL_WIDE_INVALID && !(e->tsc & BL_WIDE_CONT));   /* validated, one entry */
    CHECK(e->seq == 0 && e->type == 31 && e->cpu == 7 && e->len == 1);
    CHECK(e->data[0] == 5 && e->data[1] == 6);
    CHECK_EQ(r.head, 1);
    CHECK(wide_slots[1].tsc == 0xABABABABABABABABull);     /* nothing else touched */
}

int main(void)
{
    test_spin();
    test_strat9();
    test_global();
    test_wide();
    return check_summary("test_baselines");
}
