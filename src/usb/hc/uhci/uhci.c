/* uhci.c — find each UHCI, take it from the BIOS, reset it, start its
 * schedule; its root ports (Intel UHCI Design Guide rev 1.1 §2). */
#include "usb/hc/uhci/uhci.h"
#include "arch/cpu.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "mm/mem.h"
#include "time/deadline.h"
#include "time/tsc.h"
#include "usb/core/hcsetup.h"
#include "usb/hc/uhci/uhci_dev.h"
#include "usb/hc/uhci/uhci_state.h"

#define LEGSUP_TIMEOUT_US      100000   /* SMI and trap enables read back off */
#define HALT_TIMEOUT_US        100000   /* HCHalted within a frame or two */
#define HCRESET_TIMEOUT_US     100000   /* HCRESET clears itself (Linux waits 5 us) */
#define PORT_ENABLE_TIMEOUT_US 100000
#define PORT_RECOVERY_US       10000    /* TRSTRCY (USB 2.0 §7.1.7.5) */
#define PORT_ENABLE_DELAY_US   10      /* after PR clears, before PED is set */
#define SOFMOD_DEFAULT         64       /* 1 ms frames: SOF timing as after reset */

static struct uhci ctrl[UHCI_MAX_CTRL];
static unsigned n_ctrl;

static uint32_t phys(const volatile void *p) { return (uint32_t)(uintptr_t)p; }

static uint16_t rd16(struct uhci *hc, uint16_t off) { return inw((uint16_t)(hc->io + off)); }
static void wr16(struct uhci *hc, uint16_t off, uint16_t v) { outw((uint16_t)(hc->io + off), v); }

static void fail(struct uhci *hc, const char *what)
{
    usb_hc_fail(&hc->base, what);
}

/* Legacy support (PIIX4 datasheet, LEGSUP): clear the status bits and
 * every SMI, trap and PIRQ enable, as Linux does; the BIOS's keyboard
 * emulation stops here. The enables must read back off. */
static bool legacy_handoff(struct uhci *hc)
{
    struct deadline end = deadline_in_us(LEGSUP_TIMEOUT_US);
    for (;;) {
        pci_write16(hc->pci, UHCI_PCI_LEGSUP, LEGSUP_STATUS_RWC);
        if (!(pci_read16(hc->pci, UHCI_PCI_LEGSUP) & (LEGSUP_SMI_TRAP_EN | LEGSUP_PIRQ_EN)))
            return true;
        if (deadline_passed(end)) {
            fail(hc, "BIOS keeps its SMI/trap enables in LEGSUP on");
            return false;
        }
    }
}

/* Stop, global reset (USB reset on every port, 10 ms), then HCRESET
 * (§2.1.1); interrupts off, status cleared. */
static bool reset(struct uhci *hc)
{
    wr16(hc, UHCI_USBINTR, 0);
    wr16(hc, UHCI_USBCMD, 0);
    if (!wait_io16((uint16_t)(hc->io + UHCI_USBSTS), UHCI_STS_HCH, UHCI_STS_HCH, HALT_TIMEOUT_US)) {
        fail(hc, "does not halt (HCHalted stays 0)");
        return false;
    }
    wr16(hc, UHCI_USBCMD, UHCI_CMD_GRESET);
    tsc_delay_us(GRESET_US);
    wr16(hc, UHCI_USBCMD, 0);
    wr16(hc, UHCI_USBCMD, UHCI_CMD_HCRESET);
    if (!wait_io16((uint16_t)(hc->io + UHCI_USBCMD), UHCI_CMD_HCRESET, 0, HCRESET_TIMEOUT_US)) {
        fail(hc, "reset does not complete (HCRESET stays 1)");
        return false;
    }
    wr16(hc, UHCI_USBINTR, 0);
    wr16(hc, UHCI_USBSTS, UHCI_STS_ALL);
    return true;
}

/* Ports: PORTSC registers whose always-1 bit reads 1 (as Linux counts). */
static uint32_t count_ports(struct uhci *hc)
{
    uint32_t p = 1;
    for (; p <= UHCI_MAX_PORTS; p++) {
        uint16_t sc = rd16(hc, UHCI_PORTSC(p));
        if (!(sc & UHCI_PORT_ALWAYS1) || sc == 0xFFFF)
            break;
    }
    return p - 1;
}

/* The schedule (§3.1): every frame points at the interrupt QH, which
 * leads to the interrupt endpoints' QHs (uhci_intr_open), then the
 * control QH, then bulk. */
static bool build_schedule(struct uhci *hc)
{
    hc->frames = mem_alloc(UHCI_FRAMES * sizeof(uint32_t), 4096);
    struct uhci_qh *qh = mem_alloc(3 * sizeof *qh, 16);
    hc->tds = mem_alloc(UHCI_POOL_TDS * sizeof(struct uhci_td), 16);
    hc->setup = mem_alloc(8, 16);
    if (!hc->frames || !qh || !hc->tds || !hc->setup)
        return false;
    hc->intr = &qh[0];
    hc->ctrl = &qh[1];
    hc->bulk = &qh[2];
    hc->intr->head = phys(hc->ctrl) | UHCI_LINK_QH;
    hc->ctrl->head = phys(hc->bulk) | UHCI_LINK_QH;
    hc->bulk->head = UHCI_LINK_T;
    for (int i = 0; i < 3; i++)
        qh[i].element = UHCI_LINK_T;
    for (unsigned f = 0; f < UHCI_FRAMES; f++)
        hc->frames[f] = phys(hc->intr) | UHCI_LINK_QH;
    return true;
}

static bool start(struct uhci *hc)
{
    struct pci_bar bar;
    if (!pci_bar(hc->pci, UHCI_PCI_BAR, &bar) || !bar.io || !bar.size || bar.base > 0xFFFF) {
        fail(hc, "BAR4 is not an I/O BAR");
        return false;
    }
    hc->io = (uint16_t)bar.base;
    pci_enable(hc->pci, PCI_CMD_IO | PCI_CMD_MASTER);
    if (!usb_hc_step(&hc->base, "BIOS handoff") || !legacy_handoff(hc) ||
        !usb_hc_step(&hc->base, "global reset and HCRESET") || !reset(hc) ||
        !usb_hc_step(&hc->base, "frame list"))
        return false;
    if (!build_schedule(hc)) {
        fail(hc, "out of memory for its frame list");
        return false;
    }
    hc->base.ports = count_ports(hc);
    outl((uint16_t)(hc->io + UHCI_FRBASEADD), phys(hc->frames));
    wr16(hc, UHCI_FRNUM, 0);
    outb((uint16_t)(hc->io + UHCI_SOFMOD), SOFMOD_DEFAULT);
    wr16(hc, UHCI_USBCMD, UHCI_CMD_RUN | UHCI_CMD_CF | UHCI_CMD_MAXP);
    if (!wait_io16((uint16_t)(hc->io + UHCI_USBSTS), UHCI_STS_HCH, 0, HALT_TIMEOUT_US)) {
        fail(hc, "does not run (HCHalted stays 1)");
        return false;
    }
    return true;
}

/* PORTSC written without clearing change bits by accident: `set` may
 * hold the write-1-to-clear bits meant to be cleared. */
static void port_write(struct uhci *hc, uint32_t port, uint16_t clear, uint16_t set)
{
    uint16_t v = rd16(hc, (uint16_t)UHCI_PORTSC(port));
    wr16(hc, (uint16_t)UHCI_PORTSC(port), (uint16_t)((v & ~UHCI_PORT_RWC & ~clear) | set));
}

static uint32_t port_status(struct usb_hc *base, uint32_t port)
{
    struct uhci *hc = uhci_of(base);
    uint16_t sc = rd16(hc, (uint16_t)UHCI_PORTSC(port));
    port_write(hc, port, 0, sc & UHCI_PORT_CSC);
    return (sc & UHCI_PORT_CCS ? USB_PORT_CONNECTED : 0) |
           (sc & UHCI_PORT_CSC ? USB_PORT_CHANGED : 0);
}

/* USB reset on the port for 50 ms, then enable it: a UHCI root port is
 * not enabled by the reset itself (§2.1.7). The device's speed, or 0. */
static uint8_t port_reset(struct usb_hc *base, uint32_t port)
{
    struct uhci *hc = uhci_of(base);
    port_write(hc, port, 0, UHCI_PORT_PR);
    tsc_delay_us(UHCI_PORT_RESET_US);
    port_write(hc, port, UHCI_PORT_PR, 0);
    tsc_delay_us(PORT_ENABLE_DELAY_US);
    port_write(hc, port, 0, UHCI_PORT_PED | UHCI_PORT_RWC);
    if (!wait_io16((uint16_t)(hc->io + UHCI_PORTSC(port)), UHCI_PORT_PED, UHCI_PORT_PED,
                   PORT_ENABLE_TIMEOUT_US)) {
        kprintf("usb: %s uhci: port %u: not enabled after reset (PORTSC %04x); skipped\n",
                base->name, port, rd16(hc, (uint16_t)UHCI_PORTSC(port)));
        return 0;
    }
    uint16_t sc = rd16(hc, (uint16_t)UHCI_PORTSC(port));
    port_write(hc, port, 0, UHCI_PORT_RWC);
    tsc_delay_us(PORT_RECOVERY_US);
    if (!(sc & UHCI_PORT_CCS))
        return 0;
    return sc & UHCI_PORT_LSDA ? SPEED_LOW : SPEED_FULL;
}

/* Queued interrupt transfers, then connect changes on the root ports
 * (acknowledged by port_status). */
static void poll(struct usb_hc *base)
{
    struct uhci *hc = uhci_of(base);
    uint16_t sts = rd16(hc, UHCI_USBSTS);
    if (sts & (UHCI_STS_HSE | UHCI_STS_HCPE | UHCI_STS_HCH)) {
        char why[80];
        ksnprintf(why, sizeof why, "stopped (USBSTS %04x: host system error, process error "
                                   "or halted)",
                  sts);
        fail(hc, why);
        return;
    }
    uhci_poll_async(hc);
    for (uint32_t p = 1; p <= base->ports; p++)
        if (rd16(hc, (uint16_t)UHCI_PORTSC(p)) & UHCI_PORT_CSC)
            base->port_changed |= 1ull << (p - 1);
}

/* clang-format off */
static const struct usb_hc_ops uhci_ops = {
    .port_status = port_status, .port_reset = port_reset,
    .address = uhci_address, .set_mps0 = uhci_set_mps0, .configure = uhci_configure,
    .release = uhci_release, .control = uhci_control, .transfer = uhci_transfer,
    .queue = uhci_queue, .ep_reset = uhci_ep_reset, .ep_cancel = uhci_ep_cancel,
    .poll = poll,
};
/* clang-format on */

struct usb_hc *uhci_start_one(const struct pci_func *f)
{
    if (n_ctrl == UHCI_MAX_CTRL) {
        kprintf("usb: %02x:%02x.%x uhci: left alone (only %u controllers are driven)\n",
                f->bus, f->dev, f->fn, UHCI_MAX_CTRL);
        return NULL;
    }
    struct uhci *hc = &ctrl[n_ctrl++];
    hc->pci = f;
    usb_hc_init(&hc->base, &uhci_ops, "uhci", f);    /* named, its setup clock started */
    if (!start(hc))
        return &hc->base;                /* named by start(), marked dead */
    kprintf("usb: %s uhci: %u ports\n", hc->base.name, hc->base.ports);
    return &hc->base;
}
