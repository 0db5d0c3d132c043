/* nicpci.h — which driver takes which PCI network controller.
 *
 * One row per driver in nicpci.c's table, tried in order for every PCI
 * function: the first whose match() says yes gets start(). A driver adds
 * itself with one row and its header:
 *     { "virtio", virtio_net_match, virtio_net_start },
 * match: pure, reads only the struct (vendor, device, class);
 * start: nic.h's contract (fill *n and return true, or say on the console
 * why the device is left alone and return false).
 * Every Ethernet controller (class 02/00) no row takes is named on the
 * console with its IDs, so a user sees why it is not used. */
#ifndef NET_NICPCI_H
#define NET_NICPCI_H
#include <stdbool.h>
#include "dev/pci.h"
#include "net/nic.h"

struct nicpci_driver {
    const char *name;
    bool (*match)(const struct pci_func *f);
    bool (*start)(const struct pci_func *f, struct nic *n);
};

/* Start a driver on each PCI network controller that has one, up to max;
 * returns how many started (filled into nics[0..]). */
unsigned nicpci_probe(struct nic *nics, unsigned max);

#endif
