/* xhci.c — find each xHCI, take it from the BIOS, reset and start it
 * (xHCI §4.2 initialisation); its root ports are roothub.c's. */
#include "usb/hc/xhci/xhci.h"
#include "lib/kprintf.h"
#include "mm/mem.h"
#include "time/deadline.h"
#include "time/tsc.h"
#include "usb/core/hcsetup.h"
#include "usb/hc/xhci/xhci_dev.h"
#include "usb/hc/xhci/xhci_event.h"
#include "usb/hc/xhci/xhci_hw.h"
#include "usb/hc/xhci/xhci_port.h"
#include "usb/hc/xhci/xhci_state.h"
#include "usb/hc/xhci/xhci_xfer.h"

#define HANDOFF_TIMEOUT_US 1000000  /* BIOS gives up ownership (Linux: 1 s) */
#define HALT_TIMEOUT_US    100000   /* HCHalted within 16 ms (§5.4.1) */
#define RESET_TIMEOUT_US   1000000
#define XECP_MAX           64       /* capabilities walked, at most */
#define HCRST_SETTLE_US    1000     /* some Intel hosts hang if read sooner */
/* Intel 7/8/9-series PCHs route ports to EHCI until the OS switches them
 * (PCH datasheets: XUSB2PR, USB3_PSSEN and their BIOS-set masks). */
#define PCI_VENDOR_INTEL   0x8086
#define INTEL_XUSB2PR      0xD0
#define INTEL_XUSB2PRM     0xD4
#define INTEL_USB3_PSSEN   0xD8
#define INTEL_USB3PRM      0xDC
static const uint16_t intel_switchable[] = { 0x1E31, 0x8C31, 0x9C31, 0x8CB1, 0x9CB1 };

static struct xhci ctrl[XHCI_MAX_CTRL];
static unsigned n_ctrl;

static volatile uint32_t *reg(volatile uint8_t *base, uint32_t off)
{
    return (volatile uint32_t *)(base + off);
}

/* Walk the extended capability list (§7): call `fn` on each. */
static void each_xcap(struct xhci *hc, void (*fn)(struct xhci *, volatile uint32_t *))
{
    uint32_t off = (*reg(hc->cap, XHCI_HCCPARAMS1) >> 16) * 4;
    for (int i = 0; off && i < XECP_MAX; i++) {
        volatile uint32_t *cap = reg(hc->cap, off);
        fn(hc, cap);
        uint32_t next = (*cap >> 8) & 0xFF;
        off = next ? off + next * 4 : 0;
    }
}

/* USB Legacy Support (§7.1): ask for the OS semaphore, wait for the BIOS
 * to drop its own, take it by force if it does not, then turn off the
 * SMIs the BIOS enabled. */
static void legacy_handoff(struct xhci *hc, volatile uint32_t *cap)
{
    if ((*cap & 0xFF) != XECP_LEGACY)
        return;
    if (*cap & USBLEGSUP_BIOS) {
        *cap |= USBLEGSUP_OS;
        if (!wait_mmio32(cap, USBLEGSUP_BIOS, 0, HANDOFF_TIMEOUT_US)) {
            kprintf("usb: %s xhci: BIOS did not release the controller in 1 s; "
                    "taking it anyway\n",
                    hc->base.name);
            *cap &= ~USBLEGSUP_BIOS;
        }
    }
    *cap |= USBLEGSUP_OS;
    volatile uint32_t *ctlsts = cap + 1;
    *ctlsts = (*ctlsts & ~USBLEGCTLSTS_SMI_EN) | USBLEGCTLSTS_SMI_ST;
}

/* Supported Protocol (§7.2): which root ports are USB 3. */
static void protocol_ports(struct xhci *hc, volatile uint32_t *cap)
{
    if ((*cap & 0xFF) != XECP_PROTOCOL)
        return;
    uint32_t major = *cap >> 24, first = cap[2] & 0xFF, count = (cap[2] >> 8) & 0xFF;
    for (uint32_t p = first; p < first + count && p <= XHCI_MAX_PORTS; p++)
        hc->usb3[p] = major >= 3;
}

static void fail(struct xhci *hc, const char *what)
{
    usb_hc_fail(&hc->base, what);
}

/* Stop (clear Run/Stop, wait HCHalted), then HCRST and wait for both it
 * and Controller Not Ready to clear (§4.2). */
static bool halt_and_reset(struct xhci *hc)
{
    volatile uint32_t *cmd = reg(hc->op, XHCI_USBCMD), *sts = reg(hc->op, XHCI_USBSTS);
    if (!wait_mmio32(sts, USBSTS_CNR, 0, RESET_TIMEOUT_US)) {
        fail(hc, "never becomes ready (CNR stays 1)");
        return false;
    }
    *cmd &= ~USBCMD_RS;
    if (!wait_mmio32(sts, USBSTS_HCH, USBSTS_HCH, HALT_TIMEOUT_US)) {
        fail(hc, "does not halt (HCHalted stays 0)");
        return false;
    }
    *cmd |= USBCMD_HCRST;
    tsc_delay_us(HCRST_SETTLE_US);
    if (!wait_mmio32(cmd, USBCMD_HCRST, 0, RESET_TIMEOUT_US) ||
        !wait_mmio32(sts, USBSTS_CNR, 0, RESET_TIMEOUT_US)) {
        fail(hc, "reset does not complete (HCRST or CNR stays 1)");
        return false;
    }
    return true;
}

/* DCBAA, scratchpad buffers (HCSPARAMS2), command ring (§4.2 steps). */
static bool setup_memory(struct xhci *hc)
{
    uint32_t p2 = *reg(hc->cap, XHCI_HCSPARAMS2);
    uint32_t nscratch = ((p2 >> 21) & 0x1F) << 5 | (p2 >> 27);
    uint32_t page = (*reg(hc->op, XHCI_PAGESIZE) & 0xFFFF) << 12;
    hc->dcbaa = mem_alloc(256 * sizeof(uint64_t), 64);
    if (!hc->dcbaa || !page || !trb_ring_init(&hc->cmd))
        return false;
    if (nscratch) {
        uint64_t *array = mem_alloc(nscratch * sizeof(uint64_t), 64);
        if (!array)
            return false;
        for (uint32_t i = 0; i < nscratch; i++) {
            void *buf = mem_alloc(page, page);
            if (!buf)
                return false;
            array[i] = (uint64_t)(uintptr_t)buf;
        }
        hc->dcbaa[0] = (uint64_t)(uintptr_t)array;
    }
    *reg(hc->op, XHCI_CONFIG) = hc->slots;
    volatile uint32_t *dcbaap = reg(hc->op, XHCI_DCBAAP);
    dcbaap[0] = (uint32_t)(uintptr_t)hc->dcbaa;
    dcbaap[1] = 0;
    volatile uint32_t *crcr = reg(hc->op, XHCI_CRCR);
    crcr[0] = (uint32_t)(uintptr_t)hc->cmd.trbs | CRCR_RCS;
    crcr[1] = 0;
    return xhci_event_ring_init(hc);
}

/* Take every port the BIOS lets us from the PCH's EHCI (USB 2 routing
 * and USB 3 SuperSpeed enables), as far as the BIOS masks allow. */
static void intel_route_ports(struct xhci *hc)
{
    const struct pci_func *f = hc->pci;
    if (f->vendor != PCI_VENDOR_INTEL)
        return;
    for (unsigned i = 0; i < sizeof intel_switchable / sizeof intel_switchable[0]; i++) {
        if (f->device != intel_switchable[i])
            continue;
        pci_write32(f, INTEL_USB3_PSSEN, pci_read32(f, INTEL_USB3PRM));
        pci_write32(f, INTEL_XUSB2PR, pci_read32(f, INTEL_XUSB2PRM));
        return;
    }
}

static bool start(struct xhci *hc)
{
    if (!(hc->cap = usb_hc_map_bar(&hc->base, hc->pci, 0)))
        return false;
    hc->op = hc->cap + (*reg(hc->cap, XHCI_CAPLENGTH) & 0xFF);
    hc->rt = hc->cap + (*reg(hc->cap, XHCI_RTSOFF) & ~0x1Fu);
    hc->db = reg(hc->cap, *reg(hc->cap, XHCI_DBOFF) & ~0x3u);
    uint32_t p1 = *reg(hc->cap, XHCI_HCSPARAMS1), cp1 = *reg(hc->cap, XHCI_HCCPARAMS1);
    hc->slots = (p1 & 0xFF) < XHCI_MAX_SLOTS ? (p1 & 0xFF) : XHCI_MAX_SLOTS;
    hc->base.ports = (p1 >> 24) < XHCI_MAX_PORTS ? (p1 >> 24) : XHCI_MAX_PORTS;
    hc->ctx_size = (cp1 & HCCP1_CSZ) ? 64 : 32;
    hc->ppc = cp1 & HCCP1_PPC;
    if (!usb_hc_step(&hc->base, "BIOS handoff"))
        return false;
    each_xcap(hc, legacy_handoff);
    each_xcap(hc, protocol_ports);
    if (!usb_hc_step(&hc->base, "halt and reset") || !halt_and_reset(hc))
        return false;
    intel_route_ports(hc);
    if (!usb_hc_step(&hc->base, "rings and contexts"))
        return false;
    if (!setup_memory(hc)) {
        fail(hc, "out of memory for its rings and contexts");
        return false;
    }
    *reg(hc->op, XHCI_USBCMD) |= USBCMD_RS;
    if (!wait_mmio32(reg(hc->op, XHCI_USBSTS), USBSTS_HCH, 0, HALT_TIMEOUT_US)) {
        fail(hc, "does not run (HCHalted stays 1)");
        return false;
    }
    if (hc->ppc)                         /* root ports powered; roothub.c waits for them */
        for (uint32_t p = 1; p <= hc->base.ports; p++)
            xhci_set_portsc(hc, p, PORTSC_PP);
    return true;
}

struct usb_hc *xhci_start_one(const struct pci_func *f)
{
    if (n_ctrl == XHCI_MAX_CTRL) {
        kprintf("usb: %02x:%02x.%x xhci: left alone (only %u controllers are driven)\n",
                f->bus, f->dev, f->fn, XHCI_MAX_CTRL);
        return NULL;
    }
    struct xhci *hc = &ctrl[n_ctrl++];
    hc->pci = f;
    usb_hc_init(&hc->base, &xhci_ops, "xhci", f);
    if (!start(hc))
        return &hc->base;                /* named by start(), marked dead */
    kprintf("usb: %s xhci: %u ports, %u slots, %u-byte contexts\n", hc->base.name, hc->base.ports,
            hc->slots, hc->ctx_size);
    return &hc->base;
}

/* clang-format off */
const struct usb_hc_ops xhci_ops = {
    .port_status = xhci_port_status, .port_reset = xhci_port_reset,
    .address = xhci_address, .set_mps0 = xhci_set_mps0, .configure = xhci_configure,
    .release = xhci_release, .control = xhci_control, .transfer = xhci_transfer,
    .queue = xhci_queue, .ep_reset = xhci_ep_reset, .ep_cancel = xhci_ep_cancel,
    .poll = xhci_poll,
};
/* clang-format on */
