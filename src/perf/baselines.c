/* baselines.c — set-up of the baseline rings (baselines.h). */
#include "perf/baselines.h"

uint64_t bl_global_seq __attribute__((aligned(64)));

void bl_spin_init(struct bl_spin_ring *r, struct trace_event *slots, uint64_t capacity,
                  uint32_t cpu)
{
    *r = (struct bl_spin_ring){ .cpu = cpu, .mask = capacity - 1, .slots = slots };
}

void bl_global_init(struct bl_global_ring *g, struct trace_event *slots, uint64_t capacity)
{
    g->head = 0;
    g->mask = capacity - 1;
    g->slots = slots;
}

void bl_wide_init(struct bl_wide_ring *r, struct bl_wide_entry *slots, uint64_t capacity,
                  uint32_t cpu)
{
    *r = (struct bl_wide_ring){ .mask = capacity - 1, .cpu = cpu, .slots = slots };
}
