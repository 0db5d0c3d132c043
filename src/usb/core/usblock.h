/* usblock.h — the USB code runs on one CPU at a time: the boot CPU's key
 * poll (usbstack.c), or a network adapter's send and receive (cdc_ecm.c)
 * on whichever CPU holds the net lock (a console line, a dump from a
 * fault). usb_try_enter() never waits: it is false while another CPU, or
 * this one further out, is inside; the caller then does nothing this
 * time and comes back. */
#ifndef USB_CORE_USBLOCK_H
#define USB_CORE_USBLOCK_H
#include <stdbool.h>
#include <stdint.h>

bool usb_try_enter(void);
/* Wait at most wait_us for it (an adapter's transfer ends within its own
 * bound): the stick's writes, which must not be cut short. False when it
 * stayed taken (a CPU stopped inside it): the caller goes on anyway and
 * does not leave. */
bool usb_enter_wait(uint64_t wait_us);
void usb_leave(void);

#endif
