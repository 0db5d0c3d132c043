/* ioapic.c — I/O APIC redirection entries (82093AA data sheet §3.2). */
#include "dev/ioapic.h"

#define IOREGSEL         0x00            /* register index, at the base */
#define IOWIN            0x10            /* register data, base + 0x10 */
#define REG_VERSION      0x01            /* bits 16-23: highest redirection entry */
#define REG_REDIR(n)     (0x10 + 2 * (n))
#define REDIR_LOW_ACTIVE 0x2000         /* polarity: active low */
#define REDIR_LEVEL      0x8000          /* trigger: level */
#define INTI_POLARITY    0x3             /* MPS INTI flags, bits 0-1 */
#define INTI_TRIGGER     0xC             /* bits 2-3 */
#define INTI_ACTIVE_LOW  0x3
#define INTI_LEVEL       0xC
#define XAPIC_MAX_ID     0xFF

static uint32_t rd(uint32_t base, uint8_t reg)
{
    volatile uint32_t *io = (volatile uint32_t *)(uintptr_t)base;
    io[IOREGSEL / 4] = reg;
    return io[IOWIN / 4];
}

static void wr(uint32_t base, uint8_t reg, uint32_t v)
{
    volatile uint32_t *io = (volatile uint32_t *)(uintptr_t)base;
    io[IOREGSEL / 4] = reg;
    io[IOWIN / 4] = v;
}

bool ioapic_route_isa(const struct madt_info *m, uint8_t irq, uint8_t vector, uint32_t apic_id)
{
    uint32_t gsi = irq;
    uint16_t flags = 0;                 /* "conforms to the bus": ISA = high, edge */
    for (unsigned i = 0; i < m->overrides; i++)
        if (m->override[i].irq == irq) {
            gsi = m->override[i].gsi;
            flags = m->override[i].flags;
        }
    if (apic_id > XAPIC_MAX_ID)
        return false;
    for (unsigned i = 0; i < m->ioapics; i++) {
        const struct madt_ioapic *io = &m->ioapic[i];
        if (!io->addr || gsi < io->gsi_base)
            continue;
        uint32_t entries = ((rd(io->addr, REG_VERSION) >> 16) & 0xFF) + 1;
        if (gsi - io->gsi_base >= entries)
            continue;
        uint32_t low = vector;
        if ((flags & INTI_POLARITY) == INTI_ACTIVE_LOW)
            low |= REDIR_LOW_ACTIVE;
        if ((flags & INTI_TRIGGER) == INTI_LEVEL)
            low |= REDIR_LEVEL;
        uint8_t n = (uint8_t)(gsi - io->gsi_base);
        wr(io->addr, REG_REDIR(n) + 1, apic_id << 24);   /* destination first */
        wr(io->addr, REG_REDIR(n), low);                  /* then unmask */
        return true;
    }
    return false;
}
