/* ehci_state.h — what the EHCI driver holds: of one controller (struct
 * ehci: its register windows, frame list and the heads of its two
 * schedules, the devices by address), of one device (struct ehci_dev,
 * usb_dev.hcd) and of one endpoint (struct ehci_pipe: its QH and qTDs);
 * and the operational registers' accessors. Shared by ehci.c (start),
 * ehci_port.c (root ports), ehci_dev.c (devices and transfers) and
 * ehci_sched.c (the schedules); no code file of its own. */
#ifndef USB_HC_EHCI_EHCI_STATE_H
#define USB_HC_EHCI_EHCI_STATE_H
#include <stdbool.h>
#include <stdint.h>
#include "arch/cpu.h"
#include "dev/pci.h"
#include "time/tsc.h"
#include "usb/core/hcd.h"
#include "usb/hc/devaddr.h"
#include "usb/hc/ehci/ehci_hw.h"

#define EHCI_MAX_ADDR 127           /* USB device addresses 1..127 */

/* One endpoint of a device: its queue head and the qTDs of the transfer
 * in flight (control: setup, data, status). */
#define EHCI_PIPE_TDS 3
struct ehci_pipe {
    struct ehci_qh *qh;              /* NULL: not opened */
    struct ehci_qtd *td;              /* EHCI_PIPE_TDS of them */
    bool interrupt;               /* in the periodic schedule */
    bool queued;                  /* a usb_queue transfer is in flight */
};

/* What the controller holds of one device (usb_dev.hcd). */
struct ehci_dev {
    uint8_t setup[8];                 /* the control transfer's setup packet */
    uint8_t addr;                     /* its USB address (0 until SET_ADDRESS) */
    struct ehci_pipe pipe[USB_MAX_DCI + 1];   /* by DCI */
};

struct ehci {
    struct usb_hc base;               /* first: ehci_of() */
    const struct pci_func *pci;
    volatile uint8_t *cap, *op;
    uint32_t n_cc;                    /* companion controllers (HCSPARAMS.N_CC) */
    const char *cc_not_driven;        /* why they are not, or NULL (ehci.h) */
    bool ppc;                     /* port power switching */
    uint32_t *frames;                 /* periodic frame list */
    struct ehci_qh *async;            /* head of the asynchronous schedule (H=1, idle) */
    struct ehci_qh *intr;             /* first interrupt QH of the periodic schedule */
    struct usb_addrs addrs;           /* device addresses in use */
    struct usb_dev *dev[EHCI_MAX_ADDR + 1];   /* by address, for poll() */
};
_Static_assert(__builtin_offsetof(struct ehci, base) == 0, "ehci_of: base comes first");

static inline struct ehci *ehci_of(struct usb_hc *hc) { return (struct ehci *)hc; }
static inline struct ehci_dev *ehci_dev_of(const struct usb_dev *d) { return d->hcd; }

/* The operational registers (EHCI §2.3), at CAPLENGTH past BAR0. */
static inline uint32_t ehci_reg(struct ehci *hc, uint32_t off)
{
    return *(volatile uint32_t *)(hc->op + off);
}

static inline void ehci_set_reg(struct ehci *hc, uint32_t off, uint32_t v)
{
    *(volatile uint32_t *)(hc->op + off) = v;
}

#endif
