/* e1000.h — Intel Gigabit Ethernet controllers, driven polled
 * (net/nic.h): with legacy descriptors the 8254x family ("e1000": QEMU's
 * e1000 is an 82540EM), the 8257x/82583 and the PCH LAN I217/I218/I219
 * ("e1000e": QEMU's e1000e is an 82574L); with the queue registers and
 * advanced descriptors (net/e1000desc.h) the igb family, 82576, 82580,
 * I350, I210/I211 and I225/I226 ("igb": QEMU's igb is an 82576). The
 * 82540EM, 82574L and 82576 are tested in QEMU; docs/real-hardware.md
 * lists the rest and their quirks.
 *
 * Intel Ethernet controllers this driver does not take (82575, 10 GbE
 * parts) are named on the console by nicpci.c as controllers no driver
 * takes. */
#ifndef NET_E1000_H
#define NET_E1000_H
#include <stdbool.h>
#include "dev/pci.h"
#include "net/nic.h"

/* Whether f is an Intel controller of the table above. */
bool e1000_match(const struct pci_func *f);
/* Reset and start it: receive and transmit rings, this MAC, link asked
 * for; fills *n. False (said on the console) when a step fails. */
bool e1000_start(const struct pci_func *f, struct nic *n);

#endif
