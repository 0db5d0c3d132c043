/* uhci.h — UHCI host controllers (PCI class 0C/03/00; Intel UHCI Design
 * Guide rev 1.1): standalone (PIIX) or companions of an EHCI (ICH), all
 * polled (no interrupts).
 *
 * uhci_start_one() takes the controller from the BIOS (LEGSUP: SMIs and
 * port 60h/64h traps off), resets it (GRESET, then HCRESET) and runs a
 * schedule of 1024 frames that all point at the same three queue heads:
 * interrupt (one QH per keyboard after it, so each is polled every
 * frame), control, bulk. One control or bulk transfer is in flight at a
 * time (the USB stack is single-threaded), waited for with a bound;
 * interrupt IN transfers stay queued and are polled for completion.
 * Every wait is bounded; a controller that misbehaves is named on the
 * console ("usb: BB:DD.F uhci: ...") and left alone. */
#ifndef USB_UHCI_H
#define USB_UHCI_H
#include <stdbool.h>
#include <stdint.h>
#include "dev/pci.h"
#include "usb/uhci_td.h"

#define UHCI_MAX_CTRL   8             /* an ICH has up to 6 */
#define UHCI_POOL_TDS   128           /* one synchronous transfer's TDs */

struct uhci {
    const struct pci_func *pci;
    char     name[8];                 /* "BB:DD.F" */
    uint16_t io;                      /* USBBASE */
    unsigned ports;
    volatile uint32_t *frames;        /* the frame list */
    struct uhci_qh *intr, *ctrl, *bulk;  /* the schedule's skeleton */
    struct uhci_td *tds;              /* UHCI_POOL_TDS for control and bulk */
    uint8_t *setup;                   /* the SETUP packet's 8 bytes */
    const char *why;                  /* the last transfer's failure, in words */
    bool     dead;
};

/* One interrupt IN endpoint, queued and polled (a keyboard's reports). */
struct uhci_intr {
    struct uhci_qh *qh;
    struct uhci_td *td;
    struct uhci_pipe pipe;
    bool     toggle;
    uint32_t buf;
    uint16_t len;
};

/* Take over, reset and start the UHCI at PCI function f: the controller
 * (dead, and named, when it failed), or NULL when UHCI_MAX_CTRL are
 * driven already. */
struct uhci *uhci_start_one(const struct pci_func *f);

/* Root ports (1..hc->ports): connected now; reset and enable the port
 * and return the device's speed (SPEED_LOW or SPEED_FULL), or 0 (named). */
bool    uhci_port_connected(struct uhci *hc, unsigned port);
uint8_t uhci_port_reset(struct uhci *hc, unsigned port);
/* A connect change on the port since the last call (cleared here). */
bool    uhci_port_changed(struct uhci *hc, unsigned port);

/* One control transfer on p (8 setup bytes, len bytes of data to/from
 * buf by bit 7 of setup[0]): USB_OK or a negative USB_E* (xfer.h), with
 * hc->why saying what went wrong; *actual = data bytes moved. */
int uhci_control(struct uhci *hc, const struct uhci_pipe *p, const uint8_t *setup,
                 void *buf, uint16_t len, uint32_t *actual);
/* One bulk transfer (any length), DATA0/1 from and back into *toggle. */
int uhci_bulk(struct uhci *hc, const struct uhci_pipe *p, bool in, bool *toggle, void *buf,
              uint32_t len, uint32_t timeout_us, uint32_t *actual);

/* Put an interrupt IN endpoint in the schedule (polled every frame) and
 * queue its first transfer of len bytes into buf. False: out of memory. */
bool uhci_intr_open(struct uhci *hc, struct uhci_intr *it, const struct uhci_pipe *p,
                    void *buf, uint16_t len);
/* The queued transfer: still waiting (USB_EAGAIN), or its result and
 * *actual; after a result, uhci_intr_next queues the next one. */
#define USB_EAGAIN (-4)
int  uhci_intr_poll(struct uhci_intr *it, uint32_t *actual);
void uhci_intr_next(struct uhci_intr *it);
/* Take it out of the schedule for good (the device went away). */
void uhci_intr_close(struct uhci *hc, struct uhci_intr *it);

unsigned uhci_count(void);
struct uhci *uhci_controller(unsigned i);

#endif
