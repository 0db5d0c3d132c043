/* ehci_dev.c — devices and transfers on an EHCI as hcd.h's operations:
 * a queue head per endpoint (control and bulk in the asynchronous
 * schedule, interrupt in the periodic one), qTDs for each transfer,
 * SET_ADDRESS for a new device (devaddr.h), and the poll that completes a keyboard's
 * queued reports and notices port changes (EHCI §4.8-4.12). */
#include "usb/hc/ehci/ehci_dev.h"
#include "arch/cpu.h"
#include "lib/kassert.h"
#include "lib/kprintf.h"
#include "mm/mem.h"
#include "time/deadline.h"
#include "usb/core/say.h"
#include "usb/core/xfer.h"
#include "usb/hc/devaddr.h"
#include "usb/hc/ehci/ehci_qh.h"
#include "usb/hc/ehci/ehci_sched.h"
#include "usb/hc/ehci/ehci_state.h"

#define QH_ALIGN            32
#define SETUP_LEN           8
#define EP_ATTR_ISOCHRONOUS 1
#define EP_MPS_BITS         0x7FF    /* wMaxPacketSize 10:0; 12:11 is high-bandwidth */
#define STILL_RUNNING       (-2)

static uint32_t phys(const volatile void *p)
{
    kassert((uintptr_t)p >> 32 == 0);          /* 32-bit structures (CTRLDSSEGMENT 0) */
    return (uint32_t)(uintptr_t)p;
}

/* Open endpoint dci of d: a queue head in the schedule its type goes in. */
static struct ehci_pipe *open_pipe(struct usb_dev *d, uint8_t dci, uint16_t mps, bool interrupt)
{
    struct ehci *hc = ehci_of(d->hc);
    struct ehci_dev *ed = ehci_dev_of(d);
    struct ehci_pipe *p = &ed->pipe[dci];
    if (p->qh)
        return p;
    struct ehci_qh *qh = mem_alloc(sizeof *qh, QH_ALIGN);
    p->td = mem_alloc(EHCI_PIPE_TDS * sizeof *p->td, QH_ALIGN);
    if (!qh || !p->td)
        return NULL;
    /* clang-format off */
    struct ehci_ep_desc ep = {
        .addr = ed->addr, .endpoint = dci / 2, .speed = d->speed, .mps = mps,
        .control = dci == 1, .interrupt = interrupt,
        .tt_hub = d->tt_hub ? ehci_dev_of(d->tt_hub)->addr : 0, .tt_port = d->tt_port,
    };
    /* clang-format on */
    ehci_qh_init(qh, &ep);
    p->qh = qh;
    p->interrupt = interrupt;
    if (interrupt)
        ehci_link_periodic(hc, qh);
    else
        ehci_link_async(hc, qh);
    return p;
}

/* Where a chain of qTDs stands: a completion code once the last one is
 * done or any one halted, else STILL_RUNNING. */
static int chain_state(const volatile struct ehci_qtd *t, const volatile struct ehci_qtd *last)
{
    for (;;) {
        uint32_t tok = t->token;
        if (tok & QTD_HALTED)
            return ehci_qtd_cc(tok);
        if (tok & QTD_ACTIVE)
            return STILL_RUNNING;
        if (t == last)
            return ehci_qtd_cc(tok);
        t = (const volatile struct ehci_qtd *)(uintptr_t)t->next;
    }
}

/* Hand the chain to the idle queue head (its overlay follows Next qTD,
 * §4.10.2). */
static void start(struct ehci_pipe *p, struct ehci_qtd *first)
{
    __asm__ volatile("sfence" ::: "memory");   /* the qTDs before the pointer to them */
    p->qh->next = phys(first);
}

/* Run the chain first..last on pipe p and wait for it: its completion
 * code, or -1 after timeout_us (ep_cancel then takes the QH away). */
static int run(struct ehci *hc, struct ehci_pipe *p, struct ehci_qtd *first,
               struct ehci_qtd *last, uint32_t timeout_us)
{
    start(p, first);
    struct deadline end = deadline_in_us(timeout_us);
    for (;;) {
        int cc = chain_state(first, last);
        if (cc != STILL_RUNNING)
            return cc;
        if (hc->base.dead || deadline_passed(end))
            return -1;
        cpu_relax();
    }
}

int ehci_control(struct usb_dev *d, uint64_t setup, void *buf, uint16_t len, uint32_t timeout_us)
{
    struct ehci_dev *ed = ehci_dev_of(d);
    struct ehci_pipe *p = &ed->pipe[1];
    if (!p->qh)
        return CC_TRANSACTION;
    bool in = setup & REQ_IN;
    struct ehci_qtd *su = &p->td[0], *data = &p->td[1], *status = &p->td[2];
    *(volatile uint64_t *)ed->setup = setup;
    ehci_qtd_fill(su, PID_SETUP, false, phys(ed->setup), SETUP_LEN, false);
    /* Data stages start with DATA1, and so does the status stage, which
     * goes the other way (IN when there is no data). */
    if (len && ehci_qtd_fill(data, in ? PID_IN : PID_OUT, true, phys(buf), len, false) < len)
        return CC_DATA_BUFFER;                 /* more than one qTD holds: not asked for */
    ehci_qtd_fill(status, in && len ? PID_OUT : PID_IN, true, 0, 0, true);
    su->next = phys(len ? data : status);
    data->next = phys(status);
    return run(ehci_of(d->hc), p, su, status, timeout_us);
}

int ehci_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len, uint32_t timeout_us,
                  uint32_t *residual)
{
    struct ehci_pipe *p = &ehci_dev_of(d)->pipe[dci];
    if (!p->qh)
        return CC_TRANSACTION;                 /* not an opened endpoint */
    /* One qTD at a time (each up to 16-20 KiB of whole packets), so that a
     * short packet ends the transfer where the device ended it. */
    uint32_t done = 0;
    int cc = CC_SUCCESS;
    while (done < len) {
        uint32_t take = ehci_qtd_fill(&p->td[0], dci & 1 ? PID_IN : PID_OUT, false,
                                      phys(buf) + done, len - done, true);
        cc = run(ehci_of(d->hc), p, &p->td[0], &p->td[0], timeout_us);
        if (cc != CC_SUCCESS && cc != CC_SHORT_PACKET)
            break;
        done += take - QTD_GET_BYTES(p->td[0].token);
        if (cc == CC_SHORT_PACKET)
            break;
    }
    *residual = len - done;
    return cc;
}

void ehci_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len)
{
    struct ehci_pipe *p = &ehci_dev_of(d)->pipe[dci];
    if (!p->qh || p->queued)
        return;
    ehci_qtd_fill(&p->td[0], PID_IN, false, phys(buf), len, true);
    p->queued = true;
    start(p, &p->td[0]);
}

/* A halted queue head comes back with its overlay cleared: not halted,
 * nothing pending, data toggle 0 (§4.10.3: software may write the
 * overlay of a halted QH; the controller skips it). */
bool ehci_ep_reset(struct usb_dev *d, uint8_t dci)
{
    struct ehci_pipe *p = &ehci_dev_of(d)->pipe[dci];
    if (!p->qh || (p->qh->token & QTD_ACTIVE))
        return true;
    p->qh->next = LINK_T;
    p->qh->alt_next = LINK_T;
    __asm__ volatile("sfence" ::: "memory");
    p->qh->token = 0;
    p->queued = false;
    return true;
}

/* Take the endpoint's QH out of the schedule: the controller never
 * touches the transfer again. The endpoint is closed for good. */
void ehci_ep_cancel(struct usb_dev *d, uint8_t dci)
{
    struct ehci_pipe *p = &ehci_dev_of(d)->pipe[dci];
    if (!p->qh)
        return;
    ehci_unlink(ehci_of(d->hc), p->qh, p->interrupt);
    p->qh = NULL;
    p->queued = false;
}

void ehci_release(struct usb_dev *d)
{
    struct ehci *hc = ehci_of(d->hc);
    struct ehci_dev *ed = ehci_dev_of(d);
    if (!ed)
        return;
    for (uint8_t dci = 1; dci <= USB_MAX_DCI; dci++)
        ehci_ep_cancel(d, dci);
    if (ed->addr && hc->dev[ed->addr] == d) {
        hc->dev[ed->addr] = NULL;
        usb_addr_release(&hc->addrs, ed->addr);
    }
}

/* EP0 at address 0, SET_ADDRESS (devaddr.h), then EP0 at the new address. */
bool ehci_address(struct usb_dev *d)
{
    struct ehci *hc = ehci_of(d->hc);
    struct ehci_dev *ed = mem_alloc(sizeof *ed, 64);
    if (!ed) {
        usb_say(d, "out of memory; device skipped");
        return false;
    }
    d->hcd = ed;
    struct ehci_pipe *p = open_pipe(d, 1, d->mps0, false);
    if (!p) {
        usb_say(d, "out of memory; device skipped");
        return false;
    }
    uint8_t addr = usb_addr_assign(d, &hc->addrs);
    if (!addr) {
        ehci_ep_cancel(d, 1);                  /* no transfer of it may stay behind */
        return false;
    }
    ed->addr = addr;
    hc->dev[addr] = d;
    p->qh->info1 = (p->qh->info1 & ~QH_ADDR_MASK) | QH_ADDR(addr);
    return true;
}

bool ehci_set_mps0(struct usb_dev *d)
{
    struct ehci_qh *qh = ehci_dev_of(d)->pipe[1].qh;
    if (!qh)
        return false;
    qh->info1 = (qh->info1 & ~QH_MPS_MASK) | QH_MPS(d->mps0);
    return true;
}

/* A hub needs nothing of an EHCI: the split fields are in the QHs of
 * the devices behind it. */
bool ehci_configure(struct usb_dev *d, const struct usb_ep_info *eps, unsigned n,
                    uint8_t hub_ports)
{
    (void)hub_ports;
    for (unsigned k = 0; k < n; k++) {
        uint8_t type = eps[k].attr & 3;
        if (type == EP_ATTR_ISOCHRONOUS) {
            usb_say(d, "isochronous endpoint: not supported; device skipped");
            return false;
        }
        if (!open_pipe(d, usb_ep_dci(eps[k].addr), eps[k].mps & EP_MPS_BITS,
                       type == EP_ATTR_INTERRUPT)) {
            usb_say(d, "out of memory for an endpoint; device skipped");
            return false;
        }
    }
    return true;
}

/* Completions of queued transfers (each device's async_dcis), a host
 * system error, and root port changes. */
void ehci_poll(struct usb_hc *base)
{
    struct ehci *hc = ehci_of(base);
    if (base->dead)
        return;
    if (ehci_reg(hc, EHCI_USBSTS) & USBSTS_HSE) {
        kprintf("usb: %s ehci: host system error (a DMA access failed); controller left alone\n",
                base->name);
        base->dead = true;
        return;
    }
    for (uint32_t port = 1; port <= base->ports; port++)
        if (ehci_reg(hc, EHCI_PORTSC(port)) & PORTSC_CSC)
            base->port_changed |= 1ull << (port - 1);
    for (unsigned a = 1; a <= EHCI_MAX_ADDR; a++) {
        struct usb_dev *d = hc->dev[a];
        if (!d || !d->async_dcis || !d->on_transfer)
            continue;
        for (uint8_t dci = 1; dci <= USB_MAX_DCI; dci++) {
            struct ehci_pipe *p = &ehci_dev_of(d)->pipe[dci];
            if (!(d->async_dcis & (1u << dci)) || !p->queued)
                continue;
            uint32_t tok = ((volatile struct ehci_qtd *)p->td)->token;
            if (tok & QTD_ACTIVE)
                continue;
            p->queued = false;
            d->on_transfer(d, dci, (uint8_t)ehci_qtd_cc(tok), QTD_GET_BYTES(tok));
        }
    }
}
