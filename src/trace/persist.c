/* persist.c — layout, sealing and validation of the reset-surviving
 * trace region (persist.h). */
#include "trace/persist.h"
#include "lib/crc32.h"

#define SEQ_LIMIT (1ull << 48)     /* more events than a ring can record in years */

static uint64_t round_page(uint64_t v)
{
    return (v + PERSIST_PAGE - 1) & ~(uint64_t)(PERSIST_PAGE - 1);
}

/* The header and its two tables of ncpus entries. */
static uint64_t header_bytes(uint32_t ncpus)
{
    return sizeof(struct persist_header) + 2ull * sizeof(uint32_t) * ncpus;
}

static uint64_t rings_offset(uint32_t ncpus)
{
    return round_page(header_bytes(ncpus));
}

static uint64_t slots_offset(uint32_t ncpus)
{
    return round_page(rings_offset(ncpus) + (uint64_t)ncpus * sizeof(struct ring));
}

uint64_t persist_size(uint32_t ncpus, uint32_t capacity)
{
    return slots_offset(ncpus) + (uint64_t)ncpus * capacity * sizeof(struct trace_event);
}

void persist_layout(struct persist_header *h, uint64_t phys, uint64_t boot,
                    uint32_t ncpus, uint32_t capacity)
{
    uint8_t *p = (uint8_t *)h;
    for (uint64_t i = 0; i < header_bytes(ncpus); i++)
        p[i] = 0;
    h->version = PERSIST_VERSION;
    h->header_bytes = (uint32_t)header_bytes(ncpus);
    h->phys = phys;
    h->size = persist_size(ncpus, capacity);
    h->boot = boot;
    h->ncpus = ncpus;
    h->capacity = capacity;
    h->rings_off = rings_offset(ncpus);
    h->slots_off = slots_offset(ncpus);
}

struct ring *persist_rings(struct persist_header *h)
{
    return (struct ring *)((uint8_t *)h + h->rings_off);
}

struct trace_event *persist_slots(struct persist_header *h, uint32_t cpu)
{
    return (struct trace_event *)((uint8_t *)h + h->slots_off +
                                  (uint64_t)cpu * h->capacity * sizeof(struct trace_event));
}

uint32_t *persist_apic_ids(const struct persist_header *h)
{
    return (uint32_t *)((uintptr_t)h + sizeof *h);
}

uint32_t *persist_ring_crcs(const struct persist_header *h)
{
    return persist_apic_ids(h) + h->ncpus;
}

/* The ring's fields that never change after ring_init. */
static uint32_t ring_crc(const struct ring *r)
{
    uint64_t slots = (uint64_t)(uintptr_t)r->slots;
    uint32_t c = crc32_update(0, &slots, sizeof slots);
    c = crc32_update(c, &r->mask, sizeof r->mask);
    c = crc32_update(c, &r->id_bits, sizeof r->id_bits);
    c = crc32_update(c, &r->capacity, sizeof r->capacity);
    return crc32_update(c, &r->cpu, sizeof r->cpu);
}

/* The header (crc taken as 0) and its tables: the caller has checked
 * that ncpus is sane and the tables lie in memory it may read. */
static uint32_t header_crc(const struct persist_header *h)
{
    struct persist_header copy = *h;
    copy.crc = 0;
    uint32_t c = crc32_update(0, &copy, sizeof copy);
    return crc32_update(c, persist_apic_ids(h), 2ull * sizeof(uint32_t) * h->ncpus);
}

void persist_seal(struct persist_header *h)
{
    struct ring *rings = persist_rings(h);
    for (uint32_t i = 0; i < h->ncpus; i++)
        persist_ring_crcs(h)[i] = ring_crc(&rings[i]);
    h->magic = PERSIST_MAGIC;
    h->crc = header_crc(h);
}

enum persist_verdict persist_check(const struct persist_header *h, uint64_t phys, uint64_t room)
{
    if (room < sizeof *h || h->magic != PERSIST_MAGIC)
        return PERSIST_NONE;
    /* Every version kept magic and version where they are; the rest of an
     * older layout (v2: 256-entry tables inside the header) is not read. */
    if (h->version != PERSIST_VERSION)
        return PERSIST_OTHER_VERSION;
    /* ncpus sizes the tables the CRC covers: bounded before they are read
     * (a wrong but sane ncpus then fails the CRC). */
    if (h->ncpus == 0 || h->ncpus > PERSIST_MAX_CPUS || room < header_bytes(h->ncpus))
        return PERSIST_BAD_LAYOUT;
    if (h->crc != header_crc(h))
        return PERSIST_BAD_CRC;
    bool cap_ok = h->capacity >= RING_MIN_CAPACITY && h->capacity <= RING_MAX_CAPACITY &&
                  !(h->capacity & (h->capacity - 1));
    if (h->header_bytes != header_bytes(h->ncpus) || h->phys != phys || !cap_ok ||
        h->rings_off != rings_offset(h->ncpus) || h->slots_off != slots_offset(h->ncpus) ||
        h->size != persist_size(h->ncpus, h->capacity) || h->size > room)
        return PERSIST_BAD_LAYOUT;
    return PERSIST_OK;
}

const char *persist_verdict_name(enum persist_verdict v)
{
    switch (v) {
    case PERSIST_OK:            return "intact";
    case PERSIST_NONE:          return "no trace";
    case PERSIST_BAD_CRC:       return "header CRC wrong";
    case PERSIST_BAD_LAYOUT:    return "header inconsistent";
    case PERSIST_OTHER_VERSION: return "kept by a kernel with another layout version";
    }
    return "?";
}

bool persist_ring_ok(const struct persist_header *h, uint32_t cpu)
{
    const struct ring *r = &persist_rings((struct persist_header *)h)[cpu];
    uint64_t want_slots = h->phys + h->slots_off +
                          (uint64_t)cpu * h->capacity * sizeof(struct trace_event);
    if (ring_crc(r) != persist_ring_crcs(h)[cpu] || (uint64_t)(uintptr_t)r->slots != want_slots ||
        r->capacity != h->capacity || r->mask != h->capacity - 1ull || r->cpu != cpu)
        return false;
    return r->head < SEQ_LIMIT && r->base <= r->head && r->commit <= r->head &&
           r->head - r->commit <= PERSIST_MAX_INFLIGHT && r->refused_base <= r->refused;
}
