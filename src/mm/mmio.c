/* mmio.c — identity mappings for device memory, 2 MiB pages. */
#include "mm/mmio.h"
#include "arch/pat.h"
#include "arch/spinlock.h"
#include "mm/mem.h"

#define PTE_P       (1ull << 0)
#define PTE_W       (1ull << 1)
#define PTE_PWT     (1ull << 3)
#define PTE_PCD     (1ull << 4)
#define PTE_PS      (1ull << 7)
#define PTE_ADDR    0x000FFFFFFFFFF000ull
#define PAGE_2M     (1ull << 21)
#define PHYS_LIMIT  (1ull << 48)
#define TABLE_BYTES 4096

extern uint64_t boot_pml4[512];

static struct spinlock lock;

static void invlpg(uint64_t addr)
{
    __asm__ volatile("invlpg (%0)" : : "r"(addr) : "memory");
}

/* The table the entry points to, allocating (zeroed) when not present. */
static uint64_t *next_table(uint64_t *entry)
{
    if (!(*entry & PTE_P)) {
        void *t = mem_alloc(TABLE_BYTES, TABLE_BYTES);
        if (!t)
            return 0;
        *entry = (uint64_t)(uintptr_t)t | PTE_P | PTE_W;
    }
    return (uint64_t *)(uintptr_t)(*entry & PTE_ADDR);
}

/* The page-directory entry that maps the 2 MiB page at `addr`. */
static uint64_t *pd_entry(uint64_t addr)
{
    uint64_t *pdpt = next_table(&boot_pml4[(addr >> 39) & 511]);
    uint64_t *pd = pdpt ? next_table(&pdpt[(addr >> 30) & 511]) : 0;
    return pd ? &pd[(addr >> 21) & 511] : 0;
}

void *mmio_map(uint64_t phys, uint64_t size, enum mmio_type type)
{
    if (!size || phys >= PHYS_LIMIT || size > PHYS_LIMIT - phys)
        return 0;
    if (type == MMIO_WC && !pat_wc())
        type = MMIO_UNCACHED;
    uint64_t cache = type == MMIO_UNCACHED ? PTE_PCD | PTE_PWT
                     : type == MMIO_WC     ? pat_pde_bits(PAT_ENTRY_WC)
                                           : 0;
    uint64_t end = phys + size;
    bool ok = true;
    spin_lock(&lock);
    for (uint64_t a = phys & ~(PAGE_2M - 1); a < end; a += PAGE_2M) {
        uint64_t *e = pd_entry(a);
        if (!e) {
            ok = false;
            break;
        }
        if (type == MMIO_WC && mem_is_ram(a, PAGE_2M))
            continue;                   /* never RAM: WC is weakly ordered */
        uint64_t want = a | PTE_P | PTE_W | PTE_PS | cache;
        if ((*e & PTE_P) && type == MMIO_CACHED)
            continue;                   /* already reachable: keep its type */
        if (*e != want) {
            *e = want;
            invlpg(a);
        }
    }
    spin_unlock(&lock);
    return ok ? (void *)(uintptr_t)phys : 0;
}
