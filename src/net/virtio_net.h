/* virtio_net.h — virtio-net (VIRTIO 1.1 §5.1) on the modern PCI
 * transport: one receive and one transmit queue, polled, for VMs and
 * cloud machines. QEMU's virtio-net-pci stands in (tested there). */
#ifndef NET_VIRTIO_NET_H
#define NET_VIRTIO_NET_H
#include <stdbool.h>
#include "dev/pci.h"
#include "net/nic.h"

/* A virtio network device: 1AF4:1041 (modern) or 1AF4:1000 (transitional). */
bool virtio_net_match(const struct pci_func *f);
/* Bring it up (features, queues, receive buffers, DRIVER_OK) and fill n
 * (model "virtio"). False, with the device named on the console and its
 * status set to FAILED, when it cannot be used. */
bool virtio_net_start(const struct pci_func *f, struct nic *n);

#endif
