/* ohci_ed.h — OHCI endpoint descriptors and general TDs built and read
 * back: the TDs of a control transfer (SETUP, data, status) or of a
 * bulk or interrupt transfer, queued the OpenHCI way (the ED's empty
 * tail TD becomes the first one, a fresh empty TD the new tail, §5.2.8),
 * and what a queue says after the controller ran (OpenHCI 1.0a §4.2,
 * §4.3). Pure: no hardware, no allocation; TDs are identity-mapped (a
 * TD's physical address is its address), so the host unit tests
 * (test_ohci_ed) check the bits against the specification. */
#ifndef USB_HC_OHCI_OHCI_ED_H
#define USB_HC_OHCI_OHCI_ED_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/hc/ohci/ohci_hw.h"
#include "usb/hc/pipe.h"

/* The ED's dword 0: FA, EN, direction (ED_DIR_TD for control), S, MPS. */
uint32_t ohci_ed_flags(const struct usb_pipe *p, uint32_t dir);

/* A control transfer into td[0..n): SETUP (8 bytes at setup_phys, DATA0),
 * the data stage (DATA1 first, then the ED's toggle carry; IN with buffer
 * rounding), the status stage (the other direction, or IN without data;
 * DATA1); the data stage is at most OHCI_CONTROL_MAX bytes (one TD).
 * td[0] must be the ED's tail TD now; td[n] is cleared and
 * becomes the new tail, which td[n-1] links to. The count n, or 0 when
 * more than max - 1 TDs would be needed. */
#define OHCI_CONTROL_MAX 4096
unsigned ohci_control_tds(struct ohci_td *const *td, unsigned max, uint32_t setup_phys,
                          bool in, uint32_t buf, uint16_t len);
/* A bulk or interrupt transfer of len bytes (0: one zero-length packet):
 * TDs of at most two 4 KiB pages each, whole packets of `mps` but the
 * last, toggles from the ED; only the last one with buffer rounding, so
 * that a short packet before it halts the ED (data underrun: the
 * transfer ended short). Same tail convention and result. */
unsigned ohci_data_tds(struct ohci_td *const *td, unsigned max, uint16_t mps, bool in,
                       uint32_t buf, uint32_t len);

enum ohci_result {
    OHCI_ACTIVE,                     /* the controller has not got that far */
    OHCI_DONE,                       /* every TD retired without error */
    OHCI_SHORT,                      /* ended by a short packet (data underrun) */
    OHCI_STALL,                      /* the device said STALL */
    OHCI_FAILED,                     /* any other condition code */
};

/* The queue td[0..n) read back, given the ED's HeadP now: the TDs before
 * the one HeadP points at are retired. The ED halted: the retired TD
 * with a condition code other than NoError decides (`at`, `cc`). HeadP
 * at td[n] (the tail) and not halted: done. Bytes moved in `actual`
 * (SETUP not counted): a TD's length, or up to its CBP when it stopped
 * short. */
struct ohci_outcome {
    enum ohci_result result;
    unsigned at;
    uint8_t cc;
    uint32_t actual;
};
struct ohci_outcome ohci_tds_outcome(struct ohci_td *const *td, unsigned n, uint32_t ed_head);
/* A condition code in words ("stall", "device not responding", ...). */
const char *ohci_cc_name(uint8_t cc);

#endif
