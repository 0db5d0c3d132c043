/* virtio_pci.h — the virtio PCI transport, modern interface only
 * (VIRTIO 1.1 §4.1): the device's capabilities (common configuration,
 * notifications, ISR status, device configuration) mapped from its BARs,
 * the device status handshake (§3.1.1), feature negotiation and split
 * virtqueue setup. Polled: no MSI-X vector is assigned, no interrupt is
 * taken. A legacy-only device (no VIRTIO_PCI_CAP_COMMON_CFG) is refused.
 *
 * Failures set *why and, once the device was touched, its status to
 * FAILED (§2.1.1): the caller names the device and why on the console. */
#ifndef NET_VIRTIO_PCI_H
#define NET_VIRTIO_PCI_H
#include <stdbool.h>
#include <stdint.h>
#include "dev/pci.h"
#include "net/virtq.h"

#define VIRTIO_PCI_VENDOR        0x1AF4
#define VIRTIO_F_VERSION_1       (1ull << 32)   /* §6: a modern (1.0+) device */
#define VIRTIO_F_ACCESS_PLATFORM (1ull << 33) /* §6: DMA through the platform's IOMMU */

struct virtio_pci {
    const struct pci_func *f;
    volatile uint8_t *common;         /* struct virtio_pci_common_cfg (§4.1.4.3) */
    volatile uint8_t *device;         /* the device-specific configuration */
    volatile uint8_t *notify;         /* the notification area */
    uint32_t notify_mult;             /* notify_off_multiplier (§4.1.4.4) */
    uint32_t notify_len;              /* bytes of the notification area */
};

/* A virtqueue the device knows, and where to notify it. */
struct virtio_queue {
    struct virtq q;
    volatile uint16_t *notify;
    uint16_t index;
};

/* Map the capabilities, enable memory decoding and bus mastering, reset
 * the device and set ACKNOWLEDGE and DRIVER (§3.1.1 steps 1-3). */
bool virtio_pci_open(struct virtio_pci *v, const struct pci_func *f, const char **why);
/* The device's feature bits (all 64). */
uint64_t virtio_pci_device_features(struct virtio_pci *v);
/* Write the driver's features, set FEATURES_OK and check that the device
 * kept it (§3.1.1 steps 5-6). */
bool virtio_pci_set_features(struct virtio_pci *v, uint64_t features, const char **why);
/* Set up queue `index` with at most max_size entries (a power of two,
 * <= VIRTQ_MAX; the device's maximum if lower), memory from the
 * allocator, and enable it (§4.1.5.1.3). */
bool virtio_pci_queue(struct virtio_pci *v, uint16_t index, uint16_t max_size,
                      struct virtio_queue *out, const char **why);
/* Tell the device a queue has new buffers, where it wants to be told. */
void virtio_pci_kick(struct virtio_queue *q);
/* DRIVER_OK: the device is live (§3.1.1 step 8). */
void virtio_pci_driver_ok(struct virtio_pci *v);
/* FAILED: the driver gave up on the device (§2.1). */
void virtio_pci_fail(struct virtio_pci *v);
/* len bytes of the device configuration from off, read again until
 * config_generation is the same before and after (§4.1.4.3.1). */
void virtio_pci_read_config(struct virtio_pci *v, unsigned off, uint8_t *buf, unsigned len);

#endif
