/* mem.c — bump allocation from the memory map, around reserved ranges. */
#include "mm/mem.h"
#include "lib/kassert.h"
#include "lib/kstring.h"

#define MIB            0x100000ull
#define IDENTITY_LIMIT 0x100000000ull  /* boot page tables map 0..4 GiB */
#define LOW_LIMIT      0x9F000ull      /* below the EBDA */
#define LOW_FLOOR      0x1000ull       /* keep the real-mode IVT/BDA page */
#define PAGE           0x1000ull

extern char kernel_end[];

static const struct mb2_info *map;
static unsigned region;                 /* index of the range being used */
static uint64_t cursor;                 /* next free byte in that range */
static uint64_t available;
static struct {
    uint64_t base, end;
} reserved[MEM_MAX_RESERVED];
static unsigned nreserved;

static uint64_t range_start(const struct mb2_mmap_entry *e)
{
    uint64_t floor = (uint64_t)(uintptr_t)kernel_end;
    return e->base > floor ? e->base : floor;
}

static uint64_t range_end(const struct mb2_mmap_entry *e)
{
    uint64_t end = e->base + e->len;
    return end < IDENTITY_LIMIT ? end : IDENTITY_LIMIT;
}

void mem_init(const struct mb2_info *mb)
{
    map = mb;
    region = 0;
    cursor = 0;
    available = 0;
    nreserved = 0;
    for (unsigned i = 0; i < mb->mmap_count; i++) {
        const struct mb2_mmap_entry *e = &mb->mmap[i];
        if (e->type == MB2_MEM_AVAILABLE && range_end(e) > range_start(e))
            available += range_end(e) - range_start(e);
    }
}

uint64_t mem_available_bytes(void) { return available; }

/* End of the reserved range [start, start + size) overlaps, or 0. */
static uint64_t reserved_hit(uint64_t start, uint64_t size)
{
    for (unsigned i = 0; i < nreserved; i++)
        if (start < reserved[i].end && start + size > reserved[i].base)
            return reserved[i].end;
    return 0;
}

static uint64_t align_up(uint64_t v, uint64_t align)
{
    return (v + align - 1) & ~(align - 1);
}

void *mem_alloc(size_t size, size_t align)
{
    kassert(align && !(align & (align - 1)));    /* align_up needs a power of two */
    for (; map && region < map->mmap_count; region++, cursor = 0) {
        const struct mb2_mmap_entry *e = &map->mmap[region];
        if (e->type != MB2_MEM_AVAILABLE)
            continue;
        uint64_t start = align_up(cursor ? cursor : range_start(e), align), skip;
        while ((skip = reserved_hit(start, size)) != 0)
            start = align_up(skip, align);
        if (start + size <= range_end(e)) {
            cursor = start + size;
            available -= size;
            memset((void *)(uintptr_t)start, 0, size);
            kassert(!(start & (align - 1)));     /* DMA rings and pages rely on it */
            return (void *)(uintptr_t)start;
        }
    }
    return NULL;
}

bool mem_reserve(uint64_t base, uint64_t size)
{
    if (nreserved == MEM_MAX_RESERVED)
        return false;
    reserved[nreserved].base = base;
    reserved[nreserved++].end = base + size;
    return true;
}

/* First byte of range i that mem_alloc has not handed out. */
static uint64_t unused_from(unsigned i)
{
    const struct mb2_mmap_entry *e = &map->mmap[i];
    if (i < region)
        return range_end(e);
    return i == region && cursor ? cursor : range_start(e);
}

uint64_t mem_place(uint64_t size, uint64_t align, uint64_t floor)
{
    for (unsigned i = 0; map && i < map->mmap_count; i++) {
        const struct mb2_mmap_entry *e = &map->mmap[i];
        if (e->type != MB2_MEM_AVAILABLE)
            continue;
        uint64_t lo = unused_from(i) > floor ? unused_from(i) : floor;
        uint64_t start = align_up(lo, align), skip;
        while ((skip = reserved_hit(start, size)) != 0)
            start = align_up(skip, align);
        if (start + size <= range_end(e) && mem_reserve(start, size)) {
            available -= size;
            return start;
        }
    }
    return 0;
}

bool mem_is_ram(uint64_t base, uint64_t size)
{
    for (unsigned i = 0; map && i < map->mmap_count; i++) {
        const struct mb2_mmap_entry *e = &map->mmap[i];
        bool ram = e->type == MB2_MEM_AVAILABLE || e->type == MB2_MEM_ACPI_RECLAIMABLE ||
                   e->type == MB2_MEM_NVS || e->type == MB2_MEM_BAD;
        if (ram && base < e->base + e->len && e->base < base + size)
            return true;
    }
    return false;
}

bool mem_is_available(uint64_t base, uint64_t size)
{
    for (unsigned i = 0; map && i < map->mmap_count; i++) {
        const struct mb2_mmap_entry *e = &map->mmap[i];
        if (e->type == MB2_MEM_AVAILABLE && base >= e->base && base + size >= base &&
            base + size <= range_end(e))
            return true;
    }
    return false;
}

void mem_each_available(void (*fn)(uint64_t base, uint64_t end, void *ctx), void *ctx)
{
    for (unsigned i = 0; map && i < map->mmap_count; i++) {
        const struct mb2_mmap_entry *e = &map->mmap[i];
        if (e->type == MB2_MEM_AVAILABLE && range_end(e) > e->base)
            fn(e->base, range_end(e), ctx);
    }
}

uint32_t mem_low_page(void)
{
    uint64_t best = 0;
    for (unsigned i = 0; map && i < map->mmap_count; i++) {
        const struct mb2_mmap_entry *e = &map->mmap[i];
        if (e->type != MB2_MEM_AVAILABLE)
            continue;
        uint64_t lo = (e->base + PAGE - 1) & ~(PAGE - 1);
        uint64_t hi = (e->base + e->len) & ~(PAGE - 1);
        if (lo < LOW_FLOOR) lo = LOW_FLOOR;
        if (hi > LOW_LIMIT) hi = LOW_LIMIT & ~(PAGE - 1);
        if (hi >= lo + PAGE && hi - PAGE > best)
            best = hi - PAGE;           /* highest free page: far from the BDA */
    }
    return (uint32_t)best;
}
