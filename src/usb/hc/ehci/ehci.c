/* ehci.c — find each EHCI, take it from the BIOS, reset and start it with
 * an empty periodic and asynchronous schedule (EHCI §4.1 initialisation,
 * §5.1 legacy support), and fill the operations table from ehci_port.c
 * (root ports) and ehci_dev.c (devices and transfers). */
#include "usb/hc/ehci/ehci.h"
#include "arch/cpu.h"
#include "lib/kprintf.h"
#include "mm/mem.h"
#include "time/deadline.h"
#include "time/tsc.h"
#include "usb/core/hcsetup.h"
#include "usb/hc/ehci/ehci_dev.h"
#include "usb/hc/ehci/ehci_port.h"
#include "usb/hc/ehci/ehci_qh.h"
#include "usb/hc/ehci/ehci_state.h"

#define HANDOFF_TIMEOUT_US   1000000  /* BIOS gives up ownership (Linux: 1 s) */
#define HALT_TIMEOUT_US      100000   /* HCHalted within 16 micro-frames (§2.3.1) */
#define RESET_TIMEOUT_US     500000   /* HCRESET clears itself (Linux: 250 ms) */
#define SCHEDULE_TIMEOUT_US  100000   /* the schedules' status follows their enables */
#define CONFIGFLAG_SETTLE_US 5000     /* ports rerouted (Linux waits 5 ms) */
#define EECP_MAX             16       /* extended capabilities walked, at most */
#define QH_ALIGN             32
#define FRAMES_ALIGN         4096

static struct ehci ctrl[EHCI_MAX_CTRL];
static unsigned n_ctrl;

static void fail(struct ehci *hc, const char *what)
{
    usb_hc_fail(&hc->base, what);
}

/* USB Legacy Support (§5.1, in PCI configuration space at EECP): ask for
 * the OS semaphore, wait for the BIOS to drop its own, take it by force if
 * it does not, then turn off every SMI the BIOS enabled. */
static void legacy_handoff(struct ehci *hc)
{
    const struct pci_func *f = hc->pci;
    uint32_t off = HCC_EECP(*(volatile uint32_t *)(hc->cap + EHCI_HCCPARAMS));
    for (int i = 0; off >= 0x40 && i < EECP_MAX; i++) {
        uint32_t sup = pci_read32(f, (uint8_t)off);
        if ((sup & 0xFF) == EECP_LEGACY) {
            if (sup & USBLEGSUP_BIOS) {
                pci_write32(f, (uint8_t)off, sup | USBLEGSUP_OS);
                struct deadline end = deadline_in_us(HANDOFF_TIMEOUT_US);
                while ((pci_read32(f, (uint8_t)off) & USBLEGSUP_BIOS) && !deadline_passed(end))
                    tsc_delay_us(1000);
                if (pci_read32(f, (uint8_t)off) & USBLEGSUP_BIOS) {
                    kprintf("usb: %s ehci: BIOS did not release the controller in 1 s; "
                            "taking it anyway\n",
                            hc->base.name);
                    pci_write32(f, (uint8_t)off, pci_read32(f, (uint8_t)off) & ~USBLEGSUP_BIOS);
                }
            }
            pci_write32(f, (uint8_t)off, pci_read32(f, (uint8_t)off) | USBLEGSUP_OS);
            uint8_t cs = (uint8_t)(off + USBLEGCTLSTS);
            pci_write32(f, cs, (pci_read32(f, cs) & ~USBLEGCTLSTS_SMI_EN) | USBLEGCTLSTS_SMI_ST);
            return;
        }
        off = (sup >> 8) & 0xFF;
    }
}

/* Stop (Run/Stop = 0, wait HCHalted), then HCRESET and wait for it to
 * clear (§2.3.1): registers at their defaults, CONFIGFLAG 0. */
static bool halt_and_reset(struct ehci *hc)
{
    ehci_set_reg(hc, EHCI_USBCMD, ehci_reg(hc, EHCI_USBCMD) & ~USBCMD_RS);
    if (!wait_mmio32(hc->op + EHCI_USBSTS, USBSTS_HCHALTED, USBSTS_HCHALTED, HALT_TIMEOUT_US)) {
        fail(hc, "does not halt (HCHalted stays 0)");
        return false;
    }
    ehci_set_reg(hc, EHCI_USBCMD, USBCMD_HCRESET);
    if (!wait_mmio32(hc->op + EHCI_USBCMD, USBCMD_HCRESET, 0, RESET_TIMEOUT_US)) {
        fail(hc, "reset does not complete (HCRESET stays 1)");
        return false;
    }
    return true;
}

/* The periodic frame list (every entry: no interrupt QH yet) and the
 * asynchronous schedule's head: a QH that is its own successor, marked
 * the head of the reclamation list, with an idle, halted overlay. */
static bool setup_memory(struct ehci *hc)
{
    hc->frames = mem_alloc(EHCI_FRAMES * sizeof(uint32_t), FRAMES_ALIGN);
    hc->async = mem_alloc(sizeof *hc->async, QH_ALIGN);
    if (!hc->frames || !hc->async)
        return false;
    for (unsigned i = 0; i < EHCI_FRAMES; i++)
        hc->frames[i] = LINK_T;
    struct ehci_ep_desc head = { .speed = SPEED_HIGH, .mps = 64 };
    ehci_qh_init(hc->async, &head);
    hc->async->info1 |= QH_HEAD;
    hc->async->token = QTD_HALTED;
    hc->async->link = (uint32_t)(uintptr_t)hc->async | LINK_TYPE_QH;
    return true;
}

static bool start(struct ehci *hc)
{
    if (!(hc->cap = usb_hc_map_bar(&hc->base, hc->pci, 0)))
        return false;
    hc->op = hc->cap + *hc->cap;                      /* CAPLENGTH */
    uint32_t hcs = *(volatile uint32_t *)(hc->cap + EHCI_HCSPARAMS);
    hc->base.ports = HCS_N_PORTS(hcs);
    hc->n_cc = HCS_N_CC(hcs);
    hc->ppc = hcs & HCS_PPC;
    if (!usb_hc_step(&hc->base, "BIOS handoff"))
        return false;
    legacy_handoff(hc);
    if (!usb_hc_step(&hc->base, "halt and reset") || !halt_and_reset(hc))
        return false;
    if (!usb_hc_step(&hc->base, "schedules"))
        return false;
    if (!setup_memory(hc)) {
        fail(hc, "out of memory for its schedules");
        return false;
    }
    /* §4.1: no interrupts, 32-bit structures, the schedules, then Run
     * with both schedules enabled and a 1 ms frame list of 1024. */
    ehci_set_reg(hc, EHCI_USBINTR, 0);
    ehci_set_reg(hc, EHCI_CTRLDSSEGMENT, 0);
    ehci_set_reg(hc, EHCI_PERIODICLISTBASE, (uint32_t)(uintptr_t)hc->frames);
    ehci_set_reg(hc, EHCI_ASYNCLISTADDR, (uint32_t)(uintptr_t)hc->async);
    ehci_set_reg(hc, EHCI_USBSTS, USBSTS_ALL);
    ehci_set_reg(hc, EHCI_USBCMD, USBCMD_ITC_1 | USBCMD_PSE | USBCMD_ASE | USBCMD_RS);
    if (!wait_mmio32(hc->op + EHCI_USBSTS, USBSTS_HCHALTED, 0, HALT_TIMEOUT_US)) {
        fail(hc, "does not run (HCHalted stays 1)");
        return false;
    }
    if (!wait_mmio32(hc->op + EHCI_USBSTS, USBSTS_ASS | USBSTS_PSS, USBSTS_ASS | USBSTS_PSS,
                     SCHEDULE_TIMEOUT_US)) {
        fail(hc, "schedules do not start (ASS/PSS stay 0)");
        return false;
    }
    /* Every port to this controller; the root hub (roothub.c) then hands
     * the low/full-speed devices to the companions. */
    ehci_set_reg(hc, EHCI_CONFIGFLAG, CONFIGFLAG_CF);
    tsc_delay_us(CONFIGFLAG_SETTLE_US);
    if (hc->ppc)
        for (uint32_t p = 1; p <= hc->base.ports; p++)
            ehci_set_reg(hc, EHCI_PORTSC(p),
                         (ehci_reg(hc, EHCI_PORTSC(p)) & ~PORTSC_RW1C) | PORTSC_PP);
    return true;
}

/* clang-format off */
static const struct usb_hc_ops ehci_ops = {
    .port_status = ehci_port_status, .port_reset = ehci_port_reset,
    .address = ehci_address, .set_mps0 = ehci_set_mps0, .configure = ehci_configure,
    .release = ehci_release, .control = ehci_control, .transfer = ehci_transfer,
    .queue = ehci_queue, .ep_reset = ehci_ep_reset, .ep_cancel = ehci_ep_cancel,
    .poll = ehci_poll,
};
/* clang-format on */

static const char *next_cc_not_driven;

void ehci_companions_not_driven(const char *why) { next_cc_not_driven = why; }

struct usb_hc *ehci_start_one(const struct pci_func *f)
{
    const char *cc_not_driven = next_cc_not_driven;
    next_cc_not_driven = NULL;
    if (n_ctrl == EHCI_MAX_CTRL) {
        kprintf("usb: %02x:%02x.%x ehci: left alone (only %u controllers are driven)\n",
                f->bus, f->dev, f->fn, EHCI_MAX_CTRL);
        return NULL;
    }
    struct ehci *hc = &ctrl[n_ctrl++];
    hc->pci = f;
    hc->cc_not_driven = cc_not_driven;
    usb_hc_init(&hc->base, &ehci_ops, "ehci", f);
    if (!start(hc))
        return &hc->base;                /* named by start(), marked dead */
    kprintf("usb: %s ehci: %u ports, %u companion controllers\n", hc->base.name,
            hc->base.ports, hc->n_cc);
    return &hc->base;
}
