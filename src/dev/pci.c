/* pci.c — configuration mechanism #1 and a one-time bus walk. */
#include "dev/pci.h"
#include "arch/cpu.h"
#include "arch/spinlock.h"

#define CONFIG_ADDRESS 0xCF8
#define CONFIG_DATA    0xCFC
#define CONFIG_ENABLE  (1u << 31)
#define HEADER_MULTI   0x80
#define HEADER_KIND    0x7F
#define STATUS_CAPS    (1u << 4)
#define PCI_STATUS     0x06
#define BAR_IO         0x1u
#define BAR_TYPE_64    0x4u
#define BAR_TYPE_MASK  0x6u
#define BAR_PREFETCH   0x8u
#define CAP_WALK_MAX   48              /* a looping list must not hang us */

static struct spinlock lock;
static struct pci_func funcs[PCI_MAX_FUNCS];
static unsigned count, dropped;

static uint32_t address(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
    return CONFIG_ENABLE | (uint32_t)bus << 16 | (uint32_t)(dev & 31) << 11 |
           (uint32_t)(fn & 7) << 8 | (off & 0xFC);
}

static uint32_t raw_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
    spin_lock(&lock);
    outl(CONFIG_ADDRESS, address(bus, dev, fn, off));
    uint32_t v = inl(CONFIG_DATA);
    spin_unlock(&lock);
    return v;
}

uint32_t pci_read32(const struct pci_func *f, uint8_t off)
{
    return raw_read32(f->bus, f->dev, f->fn, off);
}

uint16_t pci_read16(const struct pci_func *f, uint8_t off)
{
    return (uint16_t)(pci_read32(f, off) >> ((off & 2) * 8));
}

uint8_t pci_read8(const struct pci_func *f, uint8_t off)
{
    return (uint8_t)(pci_read32(f, off) >> ((off & 3) * 8));
}

void pci_write32(const struct pci_func *f, uint8_t off, uint32_t v)
{
    spin_lock(&lock);
    outl(CONFIG_ADDRESS, address(f->bus, f->dev, f->fn, off));
    outl(CONFIG_DATA, v);
    spin_unlock(&lock);
}

void pci_write16(const struct pci_func *f, uint8_t off, uint16_t v)
{
    uint32_t word = pci_read32(f, off);
    unsigned shift = (off & 2) * 8;
    word = (word & ~(0xFFFFu << shift)) | (uint32_t)v << shift;
    pci_write32(f, off, word);
}

static void add(uint8_t bus, uint8_t dev, uint8_t fn, uint32_t id)
{
    if (count >= PCI_MAX_FUNCS) {
        dropped++;
        return;
    }
    struct pci_func *f = &funcs[count++];
    f->bus = bus;
    f->dev = dev;
    f->fn = fn;
    f->vendor = (uint16_t)id;
    f->device = (uint16_t)(id >> 16);
    uint32_t cls = raw_read32(bus, dev, fn, 0x08);
    f->prog_if = (uint8_t)(cls >> 8);
    f->subclass = (uint8_t)(cls >> 16);
    f->class = (uint8_t)(cls >> 24);
}

unsigned pci_scan(void)
{
    count = dropped = 0;
    for (unsigned bus = 0; bus < 256; bus++)
        for (uint8_t dev = 0; dev < 32; dev++) {
            uint32_t id = raw_read32((uint8_t)bus, dev, 0, PCI_VENDOR);
            if ((id & 0xFFFF) == 0xFFFF)
                continue;
            add((uint8_t)bus, dev, 0, id);
            uint8_t hdr = (uint8_t)(raw_read32((uint8_t)bus, dev, 0, 0x0C) >> 16);
            for (uint8_t fn = 1; (hdr & HEADER_MULTI) && fn < 8; fn++) {
                id = raw_read32((uint8_t)bus, dev, fn, PCI_VENDOR);
                if ((id & 0xFFFF) != 0xFFFF)
                    add((uint8_t)bus, dev, fn, id);
            }
        }
    return count + dropped;
}

unsigned pci_count(void) { return count; }
unsigned pci_truncated(void) { return dropped; }
const struct pci_func *pci_func_at(unsigned i) { return i < count ? &funcs[i] : 0; }

const struct pci_func *pci_find_class(uint8_t class, uint8_t subclass, int prog_if, unsigned n)
{
    for (unsigned i = 0; i < count; i++) {
        const struct pci_func *f = &funcs[i];
        if (f->class == class && f->subclass == subclass &&
            (prog_if < 0 || f->prog_if == prog_if) && n-- == 0)
            return f;
    }
    return 0;
}

bool pci_has_class(uint8_t class)
{
    for (unsigned i = 0; i < count; i++)
        if (funcs[i].class == class)
            return true;
    return false;
}

const struct pci_func *pci_find_bdf(uint8_t bus, uint8_t dev, uint8_t fn)
{
    for (unsigned i = 0; i < count; i++)
        if (funcs[i].bus == bus && funcs[i].dev == dev && funcs[i].fn == fn)
            return &funcs[i];
    return 0;
}

/* Size a BAR: write all ones, read back the mask, restore (PCI 3.0 §6.2.5.1). */
static uint32_t size_mask(const struct pci_func *f, uint8_t off)
{
    uint32_t saved = pci_read32(f, off);
    pci_write32(f, off, 0xFFFFFFFFu);
    uint32_t mask = pci_read32(f, off);
    pci_write32(f, off, saved);
    return mask;
}

static bool is_upper_half(const struct pci_func *f, unsigned index)
{
    for (unsigned i = 0; i < index; i++) {
        uint32_t v = pci_read32(f, (uint8_t)(PCI_BAR0 + 4 * i));
        if (!(v & BAR_IO) && (v & BAR_TYPE_MASK) == BAR_TYPE_64) {
            if (i + 1 == index)
                return true;
            i++;
        }
    }
    return false;
}

bool pci_bar(const struct pci_func *f, unsigned index, struct pci_bar *out)
{
    if (index > 5 || is_upper_half(f, index))
        return false;
    uint8_t off = (uint8_t)(PCI_BAR0 + 4 * index);
    uint16_t cmd = pci_read16(f, PCI_COMMAND);
    pci_write16(f, PCI_COMMAND, cmd & ~(PCI_CMD_IO | PCI_CMD_MEMORY));
    uint32_t lo = pci_read32(f, off), mask = size_mask(f, off);
    *out = (struct pci_bar){ 0 };
    if (lo & BAR_IO) {
        out->io = true;
        out->base = lo & ~3u;
        uint32_t m = mask & ~3u & 0xFFFF;
        out->size = m ? (~m & 0xFFFF) + 1 : 0;
    } else {
        uint64_t base = lo & ~0xFull, m = mask & ~0xFull;
        if ((lo & BAR_TYPE_MASK) == BAR_TYPE_64 && index < 5) {
            uint8_t hi_off = (uint8_t)(off + 4);
            base |= (uint64_t)pci_read32(f, hi_off) << 32;
            m |= (uint64_t)size_mask(f, hi_off) << 32;
        } else {
            m |= 0xFFFFFFFF00000000ull;
        }
        out->base = base;
        out->size = (m & ~0xFull) ? ~m + 1 : 0;
        out->prefetchable = lo & BAR_PREFETCH;
    }
    pci_write16(f, PCI_COMMAND, cmd);
    return true;
}

void pci_enable(const struct pci_func *f, uint16_t cmd_bits)
{
    pci_write16(f, PCI_COMMAND, pci_read16(f, PCI_COMMAND) | cmd_bits);
}

uint8_t pci_find_cap(const struct pci_func *f, uint8_t id)
{
    if (!(pci_read16(f, PCI_STATUS) & STATUS_CAPS))
        return 0;
    uint8_t at = pci_read8(f, PCI_CAP_PTR) & 0xFC;
    for (int i = 0; at && i < CAP_WALK_MAX; i++) {
        if (pci_read8(f, at) == id)
            return at;
        at = pci_read8(f, (uint8_t)(at + 1)) & 0xFC;
    }
    return 0;
}
