/* ohci_sched.h — endpoints on an OHCI's ED lists (ohci_sched.c), for
 * ohci_dev.c: EDs opened, changed and closed, transfers queued and
 * waited for or polled. */
#ifndef USB_HC_OHCI_OHCI_SCHED_H
#define USB_HC_OHCI_OHCI_SCHED_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/hc/ohci/ohci_state.h"

/* A new endpoint with these ED flags, its ED linked into `list`; NULL
 * when memory ran out. */
struct ohci_ep *ohci_ep_open(struct ohci *hc, enum ohci_list list, uint32_t flags);
/* New ED flags for an idle endpoint (skip, a frame, write, unskip). */
void ohci_ep_set_flags(struct ohci *hc, struct ohci_ep *ep, uint32_t flags);
/* Empty the endpoint's queue (taken back from the controller), clear
 * Halted; the toggle carry back to DATA0 unless keep_toggle. */
void ohci_ep_flush(struct ohci *hc, struct ohci_ep *ep, bool keep_toggle);
/* Take the endpoint out of the controller's hands for good. */
void ohci_ep_close(struct ohci *hc, struct ohci_ep *ep);
/* One control transfer (8 setup bytes, len bytes by bit 7 of setup[0])
 * or one bulk/interrupt transfer on ep, waited for. Results:
 * CC_SUCCESS, CC_SHORT_PACKET, CC_STALL, CC_TRANSACTION (hc->why says
 * which error) or -1 (no answer in time); *actual = data bytes moved. */
int ohci_run_control(struct ohci *hc, struct ohci_ep *ep, uint64_t setup, void *buf,
                     uint16_t len, uint32_t timeout_us, uint32_t *actual);
int ohci_run_data(struct ohci *hc, struct ohci_ep *ep, bool in, void *buf, uint32_t len,
                  uint32_t timeout_us, uint32_t *actual);
/* Queue one interrupt IN transfer (nothing else queued); false when it
 * does not fit. ohci_ep_poll: OHCI_PENDING, or its completion code and
 * *actual. */
#define OHCI_PENDING (-2)
bool ohci_ep_queue(struct ohci *hc, struct ohci_ep *ep, void *buf, uint32_t len);
int ohci_ep_poll(struct ohci *hc, struct ohci_ep *ep, uint32_t *actual);

#endif
