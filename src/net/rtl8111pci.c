/* rtl8111pci.c — an RTL8111/8168 on PCI: the register window (the first
 * memory BAR of at least 256 bytes: BAR2 on the 8168, BAR0 being I/O),
 * bus mastering, and MMIO as rtl8111.c's accessor. */
#include "net/rtl8111pci.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "mm/mem.h"
#include "mm/mmio.h"
#include "net/rtl8111.h"
#include "time/tsc.h"

#define REALTEK_VENDOR 0x10EC
#define RTL8168_DEVICE 0x8168
#define RTL8161_DEVICE 0x8161

bool rtl8111_match(const struct pci_func *f)
{
    return f->vendor == REALTEK_VENDOR &&
           (f->device == RTL8168_DEVICE || f->device == RTL8161_DEVICE);
}

static uint8_t mr8(void *c, unsigned reg) { return *(volatile uint8_t *)((uint8_t *)c + reg); }
static uint16_t mr16(void *c, unsigned reg) { return *(volatile uint16_t *)((uint8_t *)c + reg); }
static uint32_t mr32(void *c, unsigned reg) { return *(volatile uint32_t *)((uint8_t *)c + reg); }
static void mw8(void *c, unsigned reg, uint8_t v) { *(volatile uint8_t *)((uint8_t *)c + reg) = v; }
static void mw16(void *c, unsigned reg, uint16_t v) { *(volatile uint16_t *)((uint8_t *)c + reg) = v; }
static void mw32(void *c, unsigned reg, uint32_t v) { *(volatile uint32_t *)((uint8_t *)c + reg) = v; }
static void delay(void *c, unsigned us)
{
    (void)c;
    tsc_delay_us(us);
}

/* The register window, mapped; NULL when there is none. */
static void *map_regs(const struct pci_func *f)
{
    struct pci_bar bar;
    for (unsigned i = 0; i < 6; i++)
        if (pci_bar(f, i, &bar) && !bar.io && bar.base && bar.size >= RTL_REGS_LEN)
            return mmio_map(bar.base, RTL_REGS_LEN, MMIO_UNCACHED);
    return NULL;
}

bool rtl8111_pci_start(const struct pci_func *f, struct nic *n)
{
    ksnprintf(n->where, sizeof n->where, "%02x:%02x.%x", f->bus, f->dev, f->fn);
    void *regs = map_regs(f);
    struct rtl8111 *r = mem_alloc(sizeof *r, 8);
    struct rtl_mem *m = mem_alloc(sizeof *m, RTL_DESC_ALIGN);
    if (!regs || !r || !m) {
        kprintf("net: rtl8111 %s: %s; skipped\n", n->where,
                regs ? "out of memory" : "no memory BAR for its registers");
        return false;
    }
    pci_enable(f, PCI_CMD_MEMORY | PCI_CMD_MASTER | PCI_CMD_INTX_OFF);
    r->io = (struct rtl_regs){ mr8, mr16, mr32, mw8, mw16, mw32, delay, regs };
    r->mem = m;
    const char *why = "";
    if (!rtl8111_start(r, n, &why)) {
        kprintf("net: rtl8111 %s: %s (XID %03x); skipped\n", n->where, why, r->xid);
        return false;
    }
    kprintf("net: %s %s (10ec:%04x, XID %03x): %02x:%02x:%02x:%02x:%02x:%02x, link %s; "
            "untested on hardware\n",
            n->where, r->family->name, f->device, r->xid, n->mac[0],
            n->mac[1], n->mac[2], n->mac[3], n->mac[4], n->mac[5],
            n->ops->link_up(n) ? "up" : "down");
    return true;
}
