/* prevboot.c — find, keep and dump the previous boot's rings. */
#include "recorder/prevboot.h"
#include "lib/kprintf.h"
#include "mm/mem.h"
#include "recorder/dump.h"
#include "trace/persist.h"
#include "trace/ring.h"

#define SCAN_STEP 0x200000ull           /* rings.c places the region on 2 MiB */

static const struct persist_header *prev;
static struct ring *copies;            /* counters frozen as found: ncpus of them */
static struct ring **rings;            /* NULL: that ring was damaged */
static uint32_t ncpus;                 /* prev->ncpus (0 when no memory for copies) */
static uint64_t events, excluded;
static unsigned damaged, rejected;

/* Every 2 MiB boundary of one available range: keep the best header. */
static void scan_range(uint64_t base, uint64_t end, void *ctx)
{
    (void)ctx;
    for (uint64_t at = (base + SCAN_STEP - 1) & ~(SCAN_STEP - 1); at + PERSIST_PAGE <= end;
         at += SCAN_STEP) {
        const struct persist_header *h = (const struct persist_header *)(uintptr_t)at;
        enum persist_verdict v = persist_check(h, at, end - at);
        if (v == PERSIST_OK && (!prev || h->boot > prev->boot))
            prev = h;
        else if (v != PERSIST_OK && v != PERSIST_NONE && rejected++ < 4)
            kprintf("trace: a kept trace at 0x%lx is unusable (%s); ignored\n", at,
                    persist_verdict_name(v));
    }
}

/* Check ring i, copy its counters, count what it holds. */
static void take_ring(uint32_t i)
{
    if (!persist_ring_ok(prev, i)) {
        damaged++;
        kprintf("trace: previous boot's ring of CPU %u is damaged; left out\n", i);
        return;
    }
    copies[i] = persist_rings((struct persist_header *)prev)[i];
    rings[i] = &copies[i];
    struct ring_snap s;
    struct trace_event ev;
    uint64_t seq;
    ring_snap_begin(&s, rings[i]);
    while (ring_snap_next(&s, &ev, &seq));
    events += s.sent;
    excluded += s.excluded;
}

void prevboot_find(void)
{
    /* One read per 2 MiB: nothing on hardware, but an emulator may take
     * seconds over gigabytes (Bochs, 3 GB: ~19 s), so say it first. */
    kprintf("trace: looking for the previous boot's trace (every 2 MiB of %lu MiB)\n",
            mem_available_bytes() >> 20);
    mem_each_available(scan_range, NULL);
    if (!prev) {
        kprintf("trace: no previous boot's trace in memory (none after a cold boot; after a "
                "warm reset, its memory was reused or cleared)\n");
        return;
    }
    mem_reserve(prev->phys, prev->size);
    /* Its counters are copied (the rings themselves stay where they are):
     * memory for as many CPUs as the previous boot had, whatever our own
     * MAX_CPUS. */
    copies = mem_alloc((uint64_t)prev->ncpus * sizeof *copies, RING_CACHE_LINE);
    rings = mem_alloc((uint64_t)prev->ncpus * sizeof *rings, sizeof *rings);
    if (!copies || !rings) {
        kprintf("trace: previous boot %lu's trace kept at 0x%lx (%u CPUs): no memory to read "
                "it; left alone\n",
                prev->boot, prev->phys, prev->ncpus);
        prev = NULL;
        return;
    }
    ncpus = prev->ncpus;
    for (uint32_t i = 0; i < ncpus; i++)
        take_ring(i);
    kprintf("trace: previous boot %lu's trace kept at 0x%lx: %u CPUs, %lu events; "
            "this boot traces into fresh rings; l dumps it\n",
            prev->boot, prev->phys, prev->ncpus, events);
    if (damaged || excluded)
        kprintf("trace: part of it was overwritten: %u rings damaged, %lu events excluded; "
                "only what is intact is dumped\n",
                damaged, excluded);
}

uint64_t prevboot_next_boot(void) { return prev ? prev->boot + 1 : 1; }

uint64_t prevboot_events(void) { return events; }
uint64_t prevboot_kept_bytes(void) { return prev ? prev->size : 0; }

uint64_t prevboot_dump(void)
{
    if (!prev) {
        kprintf("trace: no previous boot's trace to dump\n");
        return 0;
    }
    /* clang-format off */
    const struct dump_extra extras[] = {
        { "trigger", "previous", 0 },     { "prev_boot", NULL, prev->boot },
        { "capacity", NULL, prev->capacity }, { "damaged_rings", NULL, damaged },
        { "kept_at", NULL, prev->phys },
    };
    /* clang-format on */
    return dump_rings_of_previous_boot(rings, ncpus, prev->tsc_hz, persist_apic_ids(prev),
                                       extras, sizeof extras / sizeof extras[0]);
}
