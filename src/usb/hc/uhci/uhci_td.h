/* uhci_td.h — UHCI transfer descriptors built and read back: the packets
 * of a control transfer (SETUP, data, status) or of a bulk or interrupt
 * transfer, and what a chain of them says after the controller ran
 * (Intel UHCI Design Guide rev 1.1, §3.2). Pure: no hardware, no
 * allocation; the caller says where the TDs and buffers lie physically,
 * so the host unit tests (test_uhci_td) check the bits against the guide. */
#ifndef USB_HC_UHCI_UHCI_TD_H
#define USB_HC_UHCI_UHCI_TD_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/hc/pipe.h"
#include "usb/hc/uhci/uhci_hw.h"

/* One TD: active, 3 retries, `len` bytes (0 = a zero-length packet) at
 * physical `buf`, DATA0/DATA1 by `toggle`; `flags` adds TD_SPD / TD_IOC.
 * Its link is UHCI_LINK_T (the chain builders link them). */
void uhci_td_fill(struct uhci_td *td, const struct usb_pipe *p, uint8_t pid, bool toggle,
                  uint32_t buf, uint16_t len, uint32_t flags);

/* A control transfer into tds[0..max): SETUP (8 bytes at setup_phys,
 * DATA0), the data stage in packets of p->mps (DATA1 first, then
 * alternating; IN packets with SPD), and the status stage (the other
 * direction, or IN without data; DATA1, zero length). Linked depth first
 * (`phys` is tds[0]'s physical address), the last one terminates. The
 * number of TDs, or 0 when more than max are needed. */
unsigned uhci_control_tds(struct uhci_td *tds, uint32_t phys, unsigned max,
                          const struct usb_pipe *p, uint32_t setup_phys, bool in,
                          uint32_t buf, uint16_t len);
/* A bulk or interrupt transfer of len bytes (at least one packet; len 0
 * is one zero-length packet) in packets of p->mps, the first with
 * `toggle`; IN packets with SPD. The count, or 0 when more than max. */
unsigned uhci_data_tds(struct uhci_td *tds, uint32_t phys, unsigned max,
                       const struct usb_pipe *p, bool in, bool toggle, uint32_t buf,
                       uint32_t len);

enum uhci_result {
    UHCI_ACTIVE,                     /* the controller has not got that far */
    UHCI_DONE,                       /* every TD went through */
    UHCI_SHORT,                      /* an IN packet came short before the last TD */
    UHCI_STALL,                      /* the device said STALL */
    UHCI_FAILED,                     /* CRC/timeout, babble, bitstuff, buffer error */
};

/* A chain read back, in order: the first TD still active, short or
 * failed decides (`at`, its `status`); otherwise UHCI_DONE with at = n. */
struct uhci_outcome {
    enum uhci_result result;
    unsigned at;
    uint32_t status;
    unsigned packets;                /* TDs that went through (a short one counts) */
    uint32_t actual;                 /* bytes they moved, SETUP not counted */
};
struct uhci_outcome uhci_tds_outcome(const struct uhci_td *tds, unsigned n);
/* The failed TD's error in words: the error bit that stalled it ("no answer
 * (CRC/timeout)", "babble", ...), or "stalled" for a STALL handshake. */
const char *uhci_td_error(uint32_t status);

#endif
