/* ehci_sched.h — an EHCI's two schedules (ehci_sched.c), for
 * ehci_dev.c: a queue head linked into the asynchronous schedule
 * (control, bulk) or the periodic one (interrupt, polled every frame),
 * and taken out again (EHCI §4.8, §4.10). */
#ifndef USB_HC_EHCI_EHCI_SCHED_H
#define USB_HC_EHCI_EHCI_SCHED_H
#include <stdbool.h>
#include "usb/hc/ehci/ehci_state.h"

/* Put a fully built queue head into the asynchronous schedule / the
 * periodic one. */
void ehci_link_async(struct ehci *hc, struct ehci_qh *qh);
void ehci_link_periodic(struct ehci *hc, struct ehci_qh *qh);
/* Take it out again, and make sure the controller no longer holds it. */
void ehci_unlink(struct ehci *hc, struct ehci_qh *qh, bool periodic);

#endif
