/* rtl8111pci.h — finding and starting an RTL8111/8168 on PCI: its
 * memory BAR mapped uncached as rtl8111.c's register accessor.
 * Untested on hardware (QEMU has no RTL8111; see docs/real-hardware.md). */
#ifndef NET_RTL8111PCI_H
#define NET_RTL8111PCI_H
#include <stdbool.h>
#include "dev/pci.h"
#include "net/nic.h"

/* 10EC:8168 (RTL8111/8168 and their relatives by XID) or 10EC:8161. */
bool rtl8111_match(const struct pci_func *f);
/* Map, enable and start it; fill n (model "rtl8111"). False, with the
 * device named on the console, when it is left alone. */
bool rtl8111_pci_start(const struct pci_func *f, struct nic *n);

#endif
