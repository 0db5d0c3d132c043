/* ohci.c — find each OHCI, take it from SMM or the BIOS, reset it, make
 * it operational; its root-hub ports (OpenHCI 1.0a §5.1, §7.4). */
#include "usb/hc/ohci/ohci.h"
#include "arch/cpu.h"
#include "lib/kprintf.h"
#include "mm/mem.h"
#include "time/deadline.h"
#include "time/tsc.h"
#include "usb/core/hcsetup.h"
#include "usb/hc/ohci/ohci_dev.h"
#include "usb/hc/ohci/ohci_state.h"

#define OWNERSHIP_TIMEOUT_US   1000000  /* SMM gives the controller up (Linux: 500 ms) */
#define RESUME_US              20000    /* resume signalling from a BIOS driver's suspend */
#define BUS_RESET_US           50000    /* UsbReset held: TDRSTR on every port */
#define HCR_TIMEOUT_US         100000   /* HCR clears within 10 us (§5.1.1.4) */
#define OPERATIONAL_TIMEOUT_US 100000
#define PORT_RESET_TIMEOUT_US  500000  /* the root hub times the 10 ms reset itself */
#define PORT_RECOVERY_US       10000    /* TRSTRCY (USB 2.0 §7.1.7.5) */
#define POWER_GOOD_MIN_US      20000

static struct ohci ctrl[OHCI_MAX_CTRL];
static unsigned n_ctrl;

static uint32_t phys(const volatile void *p) { return (uint32_t)(uintptr_t)p; }

static void fail(struct ohci *hc, const char *what)
{
    usb_hc_fail(&hc->base, what);
}

/* §5.1.1.3.3: an SMM driver owns it (InterruptRouting): ask for it with
 * OwnershipChangeRequest and wait for IR to clear; a BIOS that does not
 * let go is overruled (IR cleared: no interrupt is enabled anyway).
 * §5.1.1.3.4: a BIOS driver runs it (not in UsbReset): resume it if it
 * is suspended; the reset below then takes it. */
static void take_ownership(struct ohci *hc)
{
    uint32_t c = ohci_read(hc, HC_CONTROL);
    if (c & CONTROL_IR) {
        ohci_write(hc, HC_COMMAND_STATUS, CMD_OCR);
        if (!wait_mmio32(hc->regs + HC_CONTROL, CONTROL_IR, 0, OWNERSHIP_TIMEOUT_US)) {
            kprintf("usb: %s ohci: SMM did not release the controller in 1 s; "
                    "taking it anyway\n",
                    hc->base.name);
            ohci_write(hc, HC_CONTROL, ohci_read(hc, HC_CONTROL) & ~CONTROL_IR);
        }
    } else if ((c & CONTROL_HCFS_MASK) != HCFS_RESET &&
               (c & CONTROL_HCFS_MASK) != HCFS_OPERATIONAL) {
        ohci_write(hc, HC_CONTROL, (c & ~CONTROL_HCFS_MASK) | HCFS_RESUME);
        tsc_delay_us(RESUME_US);
    }
    ohci_write(hc, HC_INTERRUPT_DISABLE, INT_ALL);
}

/* The HCCA and the three lists' dummy heads (skipped EDs, §5.1.1.4):
 * every interrupt-table slot points at the periodic head. */
static bool build_schedule(struct ohci *hc)
{
    hc->hcca = mem_alloc(sizeof *hc->hcca, 256);
    struct ohci_ed *eds = mem_alloc(3 * sizeof *eds, 16);
    hc->setup = mem_alloc(8, 16);
    if (!hc->hcca || !eds || !hc->setup)
        return false;
    for (int i = 0; i < 3; i++) {
        hc->head[i] = &eds[i];
        eds[i].flags = ED_K;
    }
    for (int i = 0; i < OHCI_INT_TABLE; i++)
        hc->hcca->int_table[i] = phys(hc->head[OHCI_PERIODIC]);
    return true;
}

/* Save the frame interval, UsbReset (50 ms of reset on the bus), HCR;
 * then, within the 2 ms the suspended controller allows, the HCCA, the
 * list heads, the frame timing, and UsbOperational with every list on
 * (§5.1.1.4, §7.3.1). */
static bool reset_and_run(struct ohci *hc)
{
    uint32_t fi = FM_FI_OF(ohci_read(hc, HC_FM_INTERVAL));
    if (!fi)
        fi = FM_INTERVAL_FI;
    uint32_t rwc = ohci_read(hc, HC_CONTROL) & CONTROL_RWC;
    ohci_write(hc, HC_CONTROL, rwc | HCFS_RESET);
    tsc_delay_us(BUS_RESET_US);
    ohci_write(hc, HC_COMMAND_STATUS, CMD_HCR);
    if (!wait_mmio32(hc->regs + HC_COMMAND_STATUS, CMD_HCR, 0, HCR_TIMEOUT_US)) {
        fail(hc, "reset does not complete (HCR stays 1)");
        return false;
    }
    ohci_write(hc, HC_INTERRUPT_DISABLE, INT_ALL);
    ohci_write(hc, HC_HCCA, phys(hc->hcca));
    ohci_write(hc, HC_CONTROL_HEAD_ED, phys(hc->head[OHCI_CONTROL]));
    ohci_write(hc, HC_BULK_HEAD_ED, phys(hc->head[OHCI_BULK]));
    ohci_write(hc, HC_FM_INTERVAL,
               ((ohci_read(hc, HC_FM_INTERVAL) & FM_FIT) ^ FM_FIT) | FM_FSMPS(fi) | fi);
    ohci_write(hc, HC_PERIODIC_START, PERIODIC_START(fi));
    ohci_write(hc, HC_LS_THRESHOLD, LS_THRESHOLD);
    ohci_write(hc, HC_INTERRUPT_STATUS, INT_ALL);
    ohci_write(hc, HC_CONTROL, rwc | HCFS_OPERATIONAL | CONTROL_PLE | CONTROL_CLE | CONTROL_BLE | CONTROL_CBSR_4_1);
    if (!wait_mmio32(hc->regs + HC_CONTROL, CONTROL_HCFS_MASK, HCFS_OPERATIONAL,
                     OPERATIONAL_TIMEOUT_US)) {
        fail(hc, "does not become operational (HCFS)");
        return false;
    }
    return true;
}

/* Power the root-hub ports (globally, and each port for per-port
 * switching) unless they are always on, and wait POTPGT (§7.4.1). */
static void power_ports(struct ohci *hc)
{
    uint32_t a = ohci_read(hc, HC_RH_DESCRIPTOR_A);
    hc->base.ports = RHA_NDP(a) < OHCI_MAX_PORTS ? RHA_NDP(a) : OHCI_MAX_PORTS;
    if (a & RHA_NPS)
        return;
    if (a & RHA_PSM)
        ohci_write(hc, HC_RH_DESCRIPTOR_B, ohci_read(hc, HC_RH_DESCRIPTOR_B) | RHB_PPCM_ALL);
    ohci_write(hc, HC_RH_STATUS, RH_LPSC);
    for (uint32_t p = 1; p <= hc->base.ports; p++)
        ohci_write(hc, HC_RH_PORT_STATUS(p), RP_SET_PORT_POWER);
    uint32_t us = RHA_POTPGT_MS(a) * 1000;
    tsc_delay_us(us > POWER_GOOD_MIN_US ? us : POWER_GOOD_MIN_US);
}

static bool start(struct ohci *hc)
{
    if (!(hc->regs = usb_hc_map_bar(&hc->base, hc->pci, OHCI_PCI_BAR)) ||
        !usb_hc_step(&hc->base, "ownership from SMM or BIOS"))
        return false;
    take_ownership(hc);
    if (!build_schedule(hc)) {
        fail(hc, "out of memory for its HCCA");
        return false;
    }
    if (!usb_hc_step(&hc->base, "reset") || !reset_and_run(hc) ||
        !usb_hc_step(&hc->base, "port power"))
        return false;
    power_ports(hc);
    return true;
}

static uint32_t port_status(struct usb_hc *base, uint32_t port)
{
    struct ohci *hc = ohci_of(base);
    uint32_t st = ohci_read(hc, HC_RH_PORT_STATUS(port));
    ohci_write(hc, HC_RH_PORT_STATUS(port), st & RP_CSC);
    return (st & RP_CCS ? USB_PORT_CONNECTED : 0) | (st & RP_CSC ? USB_PORT_CHANGED : 0);
}

/* SetPortReset; the root hub ends the reset and enables the port, and
 * says so with PortResetStatusChange (§7.4.4). The speed, or 0. */
static uint8_t port_reset(struct usb_hc *base, uint32_t port)
{
    struct ohci *hc = ohci_of(base);
    ohci_write(hc, HC_RH_PORT_STATUS(port), RP_SET_PORT_RESET);
    if (!wait_mmio32(hc->regs + HC_RH_PORT_STATUS(port), RP_PRSC, RP_PRSC, PORT_RESET_TIMEOUT_US)) {
        kprintf("usb: %s ohci: port %u: reset does not complete; skipped\n", base->name, port);
        return 0;
    }
    uint32_t st = ohci_read(hc, HC_RH_PORT_STATUS(port));
    ohci_write(hc, HC_RH_PORT_STATUS(port), RP_PRSC | RP_PESC);
    tsc_delay_us(PORT_RECOVERY_US);
    if (!(st & RP_CCS))
        return 0;
    if (!(st & RP_PES)) {
        kprintf("usb: %s ohci: port %u: not enabled after reset (HcRhPortStatus %08x); "
                "skipped\n",
                base->name, port, st);
        return 0;
    }
    return st & RP_LSDA ? SPEED_LOW : SPEED_FULL;
}

/* Queued interrupt transfers, connect changes on the root ports
 * (acknowledged by port_status); the done queue is not used (completion
 * is read from each ED), so WritebackDoneHead is just acknowledged. */
static void poll(struct usb_hc *base)
{
    struct ohci *hc = ohci_of(base);
    uint32_t st = ohci_read(hc, HC_INTERRUPT_STATUS);
    if (st & INT_UE) {
        fail(hc, "unrecoverable error (HcInterruptStatus UE)");
        return;
    }
    if (st & (INT_WDH | INT_SO | INT_RHSC))
        ohci_write(hc, HC_INTERRUPT_STATUS, st & (INT_WDH | INT_SO | INT_RHSC));
    ohci_poll_async(hc);
    for (uint32_t p = 1; p <= base->ports; p++)
        if (ohci_read(hc, HC_RH_PORT_STATUS(p)) & RP_CSC)
            base->port_changed |= 1ull << (p - 1);
}

/* clang-format off */
static const struct usb_hc_ops ohci_ops = {
    .port_status = port_status, .port_reset = port_reset,
    .address = ohci_address, .set_mps0 = ohci_set_mps0, .configure = ohci_configure,
    .release = ohci_release, .control = ohci_control, .transfer = ohci_transfer,
    .queue = ohci_queue, .ep_reset = ohci_ep_reset, .ep_cancel = ohci_ep_cancel,
    .poll = poll,
};
/* clang-format on */

struct usb_hc *ohci_start_one(const struct pci_func *f)
{
    if (n_ctrl == OHCI_MAX_CTRL) {
        kprintf("usb: %02x:%02x.%x ohci: left alone (only %u controllers are driven)\n",
                f->bus, f->dev, f->fn, OHCI_MAX_CTRL);
        return NULL;
    }
    struct ohci *hc = &ctrl[n_ctrl++];
    hc->pci = f;
    usb_hc_init(&hc->base, &ohci_ops, "ohci", f);    /* named, its setup clock started */
    if (!start(hc))
        return &hc->base;                /* named by start(), marked dead */
    uint32_t rev = REVISION_OF(ohci_read(hc, HC_REVISION));
    kprintf("usb: %s ohci: %u ports, OpenHCI %x.%x\n", hc->base.name, hc->base.ports,
            rev >> 4, rev & 0xF);
    return &hc->base;
}
