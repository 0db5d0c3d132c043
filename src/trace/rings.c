/* rings.c — ring memory and the early boot-phase buffer. */
#include "trace/rings.h"
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "firmware/cmdline.h"
#include "lib/format.h"
#include "lib/kassert.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "mm/mem.h"
#include "trace/persist.h"
#include "trace/trace.h"

#define EARLY_PHASES        16
/* Where the reset-surviving region goes: 2 MiB-aligned (the next boot
 * looks only there), at or above RINGS_KEEP_FLOOR (32 MiB), clear of what
 * GRUB loads (the kernel and modules near 1-16 MiB) and of the top of
 * memory, where firmware and GRUB's heap allocate downwards. */
#define KEEP_ALIGN          0x200000ull
/* Memory the rest of the boot takes after the rings: USB and page tables,
 * then per CPU its stacks, GDT/TSS and the workloads' buffers. */
#define RINGS_SPARE         (8ull << 20)
#define RINGS_SPARE_PER_CPU (64ull << 10)

static struct persist_header *keep;     /* this boot's region */
static struct ring *rings;              /* in it: struct ring[ncpus] */
static bool ready[MAX_CPUS];
static uint32_t capacity, asked;

/* Phases seen before the BSP's ring existed (BSP only, single threaded). */
static struct {
    uint64_t tsc, phase, value;
} early[EARLY_PHASES];
static unsigned early_count;

/* The region for ncpus rings of cap events, placed where the next boot
 * will look (mem_place picks the lowest fit from the memory map). */
static struct persist_header *place(uint32_t cap, uint32_t ncpus)
{
    uint64_t size = persist_size(ncpus, cap);
    uint64_t at = mem_place(size, KEEP_ALIGN, RINGS_KEEP_FLOOR);
    if (!at)
        at = mem_place(size, KEEP_ALIGN, 0);
    return (struct persist_header *)(uintptr_t)at;
}

/* Events per CPU for `bytes` of slots split among ncpus CPUs: the largest
 * power of two that fits, at least MIN_TRACE_EVENTS (the floor
 * trace.events= has), at most RING_MAX_EVENTS. Fewer would fit is said. */
_Static_assert(MIN_TRACE_EVENTS >= RING_MIN_CAPACITY, "trace.memory= rings are rings");

static uint32_t split(uint64_t bytes, uint32_t ncpus)
{
    uint64_t each = bytes / ncpus / sizeof(struct trace_event);
    uint32_t cap = MIN_TRACE_EVENTS;
    if (each < MIN_TRACE_EVENTS)
        kprintf("trace: trace.memory=%lu KiB is %lu events per CPU for %u CPUs, under the "
                "minimum of %u; using %u (%lu KiB)\n",
                bytes / 1024, each, ncpus,
                MIN_TRACE_EVENTS, MIN_TRACE_EVENTS,
                (uint64_t)MIN_TRACE_EVENTS * ncpus * sizeof(struct trace_event) / 1024);
    while (cap < RING_MAX_EVENTS && (uint64_t)cap * 2 <= each)
        cap *= 2;
    return cap;
}

bool rings_init(uint32_t events, uint64_t memory, uint32_t ncpus, uint64_t boot,
                uint64_t kept_bytes)
{
    if (ncpus > MAX_CPUS)
        ncpus = MAX_CPUS;
    uint32_t want = memory ? split(memory, ncpus) : events, cap = want;
    asked = want;
    /* Room left for the rest of the boot (the APs' stacks and tables, the
     * drivers): when the rings would not leave it, smaller rings, said
     * below. The dump shadows come after, from what is left (all or none:
     * without them dumps pause tracing, snapshot.h). */
    uint64_t avail = mem_available_bytes();
    uint64_t room = RINGS_SPARE + (uint64_t)ncpus * RINGS_SPARE_PER_CPU;
    uint64_t budget = avail > room ? avail - room : 0;
    while (cap > RING_MIN_CAPACITY && persist_size(ncpus, cap) > budget)
        cap /= 2;
    for (; cap >= RING_MIN_CAPACITY && !(keep = place(cap, ncpus)); cap /= 2);
    if (keep) {
        persist_layout(keep, (uint64_t)(uintptr_t)keep, boot, ncpus, cap);
        rings = persist_rings(keep);
        for (uint32_t n = 0; n < ncpus; n++)
            ready[n] = !ring_init(&rings[n], persist_slots(keep, n), cap, n);
        persist_seal(keep);
    }
    if (cap < RING_MIN_CAPACITY) {
        kprintf("trace: no memory for %u rings; tracing off\n", ncpus);
        return false;
    }
    char how[96];
    if (memory)
        ksnprintf(how, sizeof how, "trace.memory=%lu KiB (%u events per CPU for %u CPUs)",
                  memory / 1024, want, ncpus);
    else
        ksnprintf(how, sizeof how, "trace.events=%u", events);
    if (cap != want && kept_bytes)
        kprintf("trace: %s does not fit in memory beside the previous boot's kept trace "
                "(%lu KiB; l dumps it); using %u\n",
                how, kept_bytes / 1024, cap);
    else if (cap != want)
        kprintf("trace: %s does not fit in memory (%lu KiB free); using %u\n", how,
                avail / 1024, cap);
    capacity = cap;
    kprintf("trace: %u rings of %u events, %lu KiB in all (%s)\n", ncpus, cap,
            rings_bytes() / 1024, how);
    if (keep && keep->phys < RINGS_KEEP_FLOOR)
        kprintf("trace: the rings fit only below %lu MiB (at 0x%lx), where firmware and GRUB "
                "reuse memory: a warm reset may not keep them (fewer trace.events or more "
                "memory would)\n",
                (uint64_t)(RINGS_KEEP_FLOOR >> 20), keep->phys);
    return true;
}

uint32_t rings_asked(void) { return asked; }

uint64_t rings_bytes(void)
{
    return keep ? (uint64_t)keep->ncpus * capacity * sizeof(struct trace_event) : 0;
}

uint32_t rings_capacity(void) { return capacity; }

struct ring *rings_of(uint32_t index)
{
    return index < MAX_CPUS && ready[index] ? &rings[index] : NULL;
}

/* Events recorded and overwritten since the last clear, summed over CPUs. */
void rings_event_counts(uint64_t *recorded, uint64_t *overwritten)
{
    uint64_t cap = capacity;
    *recorded = *overwritten = 0;
    for (uint32_t i = 0; i < MAX_CPUS; i++) {
        struct ring *r = cpus[i].online ? rings_of(i) : NULL;
        if (!r)
            continue;
        uint64_t n = __atomic_load_n(&r->head, __ATOMIC_RELAXED) - r->base;
        *recorded += n;
        *overwritten += n > cap ? n - cap : 0;
    }
}

void rings_keep_facts(uint64_t tsc_hz)
{
    if (!keep)
        return;
    keep->tsc_hz = tsc_hz;
    for (uint32_t i = 0; i < keep->ncpus && i < MAX_CPUS; i++)
        persist_apic_ids(keep)[i] = cpus[i].apic_id;
    persist_seal(keep);
    if (keep->phys < RINGS_KEEP_FLOOR)      /* said at rings_init: may not be kept */
        kprintf("trace: rings at 0x%lx (%lu KiB, boot %lu), below %lu MiB: a warm reset may "
                "not keep them\n",
                keep->phys, keep->size / 1024, keep->boot,
                (uint64_t)(RINGS_KEEP_FLOOR >> 20));
    else
        kprintf("trace: rings kept across a warm reset at 0x%lx (%lu KiB, boot %lu)\n",
                keep->phys, keep->size / 1024, keep->boot);
}

void rings_attach(uint32_t index)
{
    kassert(index < MAX_CPUS);           /* a CPU index names a cpus[] slot */
    struct ring *r = rings_of(index);
    this_cpu()->ring = r;
    uint32_t want = TRACE_ENABLE | (1u << TRACE_CAT_BOOT);
    if (index != 0 || !r || (trace_get_mask() & want) != want)
        return;
    /* The BSP's ring is up: record the phases passed so far, in order,
     * with the TSC at which each happened. */
    for (unsigned i = 0; i < early_count; i++)
        ring_write_pinned(r, early[i].tsc, TRACE_EV_BOOT_PHASE, 0, early[i].phase,
                          early[i].value);
    early_count = 0;
}

void boot_phase(unsigned phase, uint64_t value)
{
    if (this_cpu()->ring) {
        trace(BOOT_PHASE, phase, value);
    } else if (early_count < EARLY_PHASES) {
        early[early_count].tsc = rdtsc();
        early[early_count].phase = phase;
        early[early_count++].value = value;
    }
}
