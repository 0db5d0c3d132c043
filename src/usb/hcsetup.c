/* hcsetup.c — bounded, visible controller setup (hcsetup.h). */
#include "usb/hcsetup.h"
#include "arch/cpu.h"
#include "console/status.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "time/tsc.h"
#include <stdarg.h>

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

bool usb_hc_step(struct usb_hc *hc, const char *fmt, ...)
{
    if (hc->dead)
        return false;
    if (!hc->setup_end)
        return true;
    if (rdtsc() > hc->setup_end) {
        kprintf("usb: %s %s: setup took more than %u ms (usb.setup_ms=), during: %s; "
                "controller left alone\n", hc->name, hc->kind, budget_ms, hc->step);
        hc->dead = true;
        usb_hc_ready(hc);
        return false;
    }
    va_list ap;
    va_start(ap, fmt);
    kvsnprintf(hc->step, sizeof hc->step, fmt, ap);
    va_end(ap);
    show(hc);
    return true;
}

void usb_hc_ready(struct usb_hc *hc)
{
    hc->setup_end = 0;
    status_usb(NULL);
}
