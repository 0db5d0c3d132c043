/* ehci_qh.h — EHCI queue heads and qTDs built from what the enumeration
 * knows of an endpoint (EHCI §3.5, §3.6, §4.12.2): the device's address
 * and speed, the endpoint's number and max packet, and, for a low- or
 * full-speed device behind a high-speed hub, that hub's address and port
 * (a split transaction through its transaction translator), with the
 * S-mask and C-mask an interrupt endpoint is scheduled by.
 * Pure: no hardware; host unit-tested against the spec's field layout
 * (test_ehci_qh). */
#ifndef USB_HC_EHCI_EHCI_QH_H
#define USB_HC_EHCI_EHCI_QH_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/hc/ehci/ehci_hw.h"

/* Interrupt endpoints: one transaction per frame, in micro-frame 0; a
 * split one's complete-splits in micro-frames 2, 3 and 4 (§4.12.3). */
#define EHCI_SMASK_INTR  0x01
#define EHCI_CMASK_SPLIT 0x1C
#define EHCI_RL_HIGH     4         /* NAK reload of high-speed async endpoints */

struct ehci_ep_desc {
    uint8_t addr;                    /* device address (0: not yet addressed) */
    uint8_t endpoint;                /* 0..15 */
    uint8_t speed;                   /* usb.h SPEED_FULL/LOW/HIGH */
    uint16_t mps;                     /* max packet size */
    bool control;                 /* endpoint 0 */
    bool interrupt;               /* in the periodic schedule */
    uint8_t tt_hub;                  /* LS/FS behind a HS hub: the hub's address, else 0 */
    uint8_t tt_port;                 /* and its port */
};

/* Clear qh and fill its characteristics and capabilities; the overlay is
 * idle (no qTD: next = T, not active, not halted); link = T. */
void ehci_qh_init(struct ehci_qh *qh, const struct ehci_ep_desc *ep);
/* Fill t for one stage: pid (PID_*), toggle, up to len bytes at physical
 * address buf (below 4 GiB), interrupt on completion. A qTD holds five
 * 4 KiB pages: the bytes it takes, all of len when they fit, else a
 * whole number of pages (so that every packet but the last is full).
 * next and alt_next are T. */
uint32_t ehci_qtd_fill(struct ehci_qtd *t, uint8_t pid, bool toggle, uint32_t buf, uint32_t len,
                       bool ioc);
/* A finished qTD's token as a completion code (usb.h CC_*): halted with
 * babble, buffer or transaction error, else a STALL; a short IN is
 * CC_SHORT_PACKET. Only for tokens whose Active bit is clear. */
int ehci_qtd_cc(uint32_t token);

#endif
