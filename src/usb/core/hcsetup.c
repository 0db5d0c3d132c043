/* hcsetup.c — bounded, visible controller setup (hcsetup.h). */
#include "usb/core/hcsetup.h"
#include <stdarg.h>
#include "arch/cpu.h"
#include "console/status.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "mm/mmio.h"
#include "time/tsc.h"

static uint32_t budget_ms = 10000;

void usb_setup_budget(uint32_t ms) { budget_ms = ms; }

static void show(const struct usb_hc *hc)
{
    char row[96];
    ksnprintf(row, sizeof row, "usb: %s %s: %s", hc->name, hc->kind, hc->step);
    status_usb(row);
}

void usb_hc_init(struct usb_hc *hc, const struct usb_hc_ops *ops, const char *kind,
                 const struct pci_func *f)
{
    hc->ops = ops;
    hc->kind = kind;
    ksnprintf(hc->name, sizeof hc->name, "%02x:%02x.%x", f->bus, f->dev, f->fn);
    ksnprintf(hc->step, sizeof hc->step, "starting");
    hc->setup_end = rdtsc() + tsc_from_us((uint64_t)budget_ms * 1000);
    kprintf("usb: %s %s: starting\n", hc->name, kind);
    show(hc);
}

bool usb_hc_on_time(struct usb_hc *hc)
{
    if (!hc->setup_end || rdtsc() <= hc->setup_end)
        return true;
    kprintf("usb: %s %s: setup took more than %u ms (usb.setup_ms=), during: %s; "
            "controller left alone\n",
            hc->name, hc->kind, budget_ms, hc->step);
    hc->dead = true;
    usb_hc_ready(hc);
    return false;
}

bool usb_hc_step(struct usb_hc *hc, const char *fmt, ...)
{
    if (hc->dead || !usb_hc_on_time(hc))
        return false;
    if (!hc->setup_end)
        return true;
    va_list ap;
    va_start(ap, fmt);
    kvsnprintf(hc->step, sizeof hc->step, fmt, ap);
    va_end(ap);
    show(hc);
    return true;
}

void usb_hc_fail(struct usb_hc *hc, const char *what)
{
    kprintf("usb: %s %s: %s; controller left alone\n", hc->name, hc->kind, what);
    hc->dead = true;
}

volatile uint8_t *usb_hc_map_bar(struct usb_hc *hc, const struct pci_func *f, unsigned index)
{
    struct pci_bar bar;
    char why[48];
    if (!pci_bar(f, index, &bar) || bar.io || !bar.size) {
        ksnprintf(why, sizeof why, "BAR%u is not a memory BAR", index);
        usb_hc_fail(hc, why);
        return NULL;
    }
    volatile uint8_t *regs = mmio_map(bar.base, bar.size, MMIO_UNCACHED);
    if (!regs) {
        ksnprintf(why, sizeof why, "BAR%u cannot be mapped", index);
        usb_hc_fail(hc, why);
        return NULL;
    }
    pci_enable(f, PCI_CMD_MEMORY | PCI_CMD_MASTER);
    return regs;
}

void usb_hc_ready(struct usb_hc *hc)
{
    hc->setup_end = 0;
    status_usb(NULL);
}
