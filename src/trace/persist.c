/* persist.c — layout, sealing and validation of the reset-surviving
 * trace region (persist.h). */
#include "trace/persist.h"
#include "lib/crc32.h"

#define SEQ_LIMIT (1ull << 48)     /* more events than a ring can record in years */

static uint64_t round_page(uint64_t v)
{
    return (v + PERSIST_PAGE - 1) & ~(uint64_t)(PERSIST_PAGE - 1);
}

static uint64_t rings_offset(void)
{
    return round_page(sizeof(struct persist_header));
}

static uint64_t slots_offset(uint32_t ncpus)
{
    return round_page(rings_offset() + (uint64_t)ncpus * sizeof(struct ring));
}

uint64_t persist_size(uint32_t ncpus, uint32_t capacity)
{
    return slots_offset(ncpus) + (uint64_t)ncpus * capacity * sizeof(struct trace_event);
}

void persist_layout(struct persist_header *h, uint64_t phys, uint64_t boot,
                    uint32_t ncpus, uint32_t capacity)
{
    uint8_t *p = (uint8_t *)h;
    for (uint64_t i = 0; i < sizeof *h; i++)
        p[i] = 0;
    h->version = PERSIST_VERSION;
    h->header_bytes = sizeof *h;
    h->phys = phys;
    h->size = persist_size(ncpus, capacity);
    h->boot = boot;
    h->ncpus = ncpus;
    h->capacity = capacity;
    h->rings_off = rings_offset();
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

static uint32_t header_crc(const struct persist_header *h)
{
    struct persist_header copy = *h;
    copy.crc = 0;
    return crc32_update(0, &copy, sizeof copy);
}

void persist_seal(struct persist_header *h)
{
    struct ring *rings = persist_rings(h);
    for (uint32_t i = 0; i < h->ncpus; i++)
        h->ring_crc[i] = ring_crc(&rings[i]);
    h->magic = PERSIST_MAGIC;
    h->crc = header_crc(h);
}

enum persist_verdict persist_check(const struct persist_header *h, uint64_t phys, uint64_t room)
{
    if (room < sizeof *h || h->magic != PERSIST_MAGIC)
        return PERSIST_NONE;
    if (h->crc != header_crc(h))
        return PERSIST_BAD_CRC;
    bool cap_ok = h->capacity >= RING_MIN_CAPACITY && h->capacity <= RING_MAX_CAPACITY &&
                  !(h->capacity & (h->capacity - 1));
    if (h->version != PERSIST_VERSION || h->header_bytes != sizeof *h || h->phys != phys ||
        !cap_ok || h->ncpus == 0 || h->ncpus > PERSIST_MAX_CPUS ||
        h->rings_off != rings_offset() || h->slots_off != slots_offset(h->ncpus) ||
        h->size != persist_size(h->ncpus, h->capacity) || h->size > room)
        return PERSIST_BAD_LAYOUT;
    return PERSIST_OK;
}

const char *persist_verdict_name(enum persist_verdict v)
{
    switch (v) {
    case PERSIST_OK:         return "intact";
    case PERSIST_NONE:       return "no trace";
    case PERSIST_BAD_CRC:    return "header CRC wrong";
    case PERSIST_BAD_LAYOUT: return "header inconsistent";
    }
    return "?";
}

bool persist_ring_ok(const struct persist_header *h, uint32_t cpu)
{
    const struct ring *r = &persist_rings((struct persist_header *)h)[cpu];
    uint64_t want_slots = h->phys + h->slots_off +
                          (uint64_t)cpu * h->capacity * sizeof(struct trace_event);
    if (ring_crc(r) != h->ring_crc[cpu] || (uint64_t)(uintptr_t)r->slots != want_slots ||
        r->capacity != h->capacity || r->mask != h->capacity - 1ull || r->cpu != cpu)
        return false;
    return r->head < SEQ_LIMIT && r->base <= r->head && r->commit <= r->head &&
           r->head - r->commit <= PERSIST_MAX_INFLIGHT && r->refused_base <= r->refused;
}
