/* uhci_sched.h — transfers on a UHCI's schedule (uhci_sched.c), for
 * uhci_dev.c: control and bulk TD chains waited for, interrupt IN
 * endpoints as queue heads of their own, polled. */
#ifndef USB_HC_UHCI_UHCI_SCHED_H
#define USB_HC_UHCI_UHCI_SCHED_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/hc/pipe.h"
#include "usb/hc/uhci/uhci_state.h"

/* One control transfer to p (8 setup bytes, len bytes of data by bit 7
 * of setup[0]); one bulk transfer of any length, DATA0/1 from and back into *toggle. Results:
 * CC_SUCCESS, CC_SHORT_PACKET, CC_STALL, CC_TRANSACTION (hc->why says
 * which error), or -1 (no answer in time); *actual = data bytes moved. */
int uhci_run_control(struct uhci *hc, const struct usb_pipe *p, uint64_t setup, void *buf,
                     uint16_t len, uint32_t timeout_us, uint32_t *actual);
int uhci_run_bulk(struct uhci *hc, const struct usb_pipe *p, bool in, bool *toggle,
                  void *buf, uint32_t len, uint32_t timeout_us, uint32_t *actual);
/* Put an interrupt IN endpoint's QH in the schedule (polled every
 * frame), with nothing queued. False: out of memory. */
bool uhci_intr_open(struct uhci *hc, struct uhci_intr *it, const struct usb_pipe *p);
/* Queue one IN transfer of len bytes (one packet) into buf (nothing
 * else queued). False: longer than the endpoint's max packet. */
bool uhci_intr_queue(struct uhci_intr *it, void *buf, uint16_t len);
/* The queued transfer: -2 still waiting (or nothing queued), else its
 * completion code and *actual. */
#define UHCI_PENDING (-2)
int uhci_intr_poll(struct uhci_intr *it, uint32_t *actual);
/* Take back what is queued (the controller is done with it on return). */
void uhci_intr_stop(struct uhci_intr *it);
/* Take the endpoint out of the schedule for good (the device went away). */
void uhci_intr_close(struct uhci *hc, struct uhci_intr *it);

#endif
