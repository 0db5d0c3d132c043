/* virtio_pci.c — the modern virtio PCI transport (VIRTIO 1.1 §4.1). */
#include "net/virtio_pci.h"
#include "arch/cpu.h"
#include "mm/mem.h"
#include "mm/mmio.h"
#include "time/deadline.h"

/* §4.1.4: struct virtio_pci_cap, in the vendor-specific capability. */
#define PCI_CAP_VENDOR            0x09
#define CAP_CFG_TYPE              3     /* u8 cfg_type */
#define CAP_BAR                   4     /* u8 bar */
#define CAP_OFFSET                8     /* le32 offset */
#define CAP_LENGTH                12    /* le32 length */
#define CAP_NOTIFY_MULT           16    /* le32 notify_off_multiplier (notify cap only) */
#define CAP_WALK_MAX              48
#define VIRTIO_PCI_CAP_COMMON_CFG 1
#define VIRTIO_PCI_CAP_NOTIFY_CFG 2
#define VIRTIO_PCI_CAP_DEVICE_CFG 4

/* §4.1.4.3: struct virtio_pci_common_cfg. */
#define CC_DEVICE_FEATURE_SELECT  0x00
#define CC_DEVICE_FEATURE         0x04
#define CC_DRIVER_FEATURE_SELECT  0x08
#define CC_DRIVER_FEATURE         0x0C
#define CC_MSIX_CONFIG            0x10
#define CC_DEVICE_STATUS          0x14
#define CC_CONFIG_GENERATION      0x15
#define CC_QUEUE_SELECT           0x16
#define CC_QUEUE_SIZE             0x18
#define CC_QUEUE_MSIX_VECTOR      0x1A
#define CC_QUEUE_ENABLE           0x1C
#define CC_QUEUE_NOTIFY_OFF       0x1E
#define CC_QUEUE_DESC             0x20
#define CC_QUEUE_DRIVER           0x28
#define CC_QUEUE_DEVICE           0x30
#define CC_LENGTH                 0x38
#define VIRTIO_MSI_NO_VECTOR      0xFFFF

/* §2.1: device status bits. */
#define STATUS_ACKNOWLEDGE        1
#define STATUS_DRIVER             2
#define STATUS_DRIVER_OK          4
#define STATUS_FEATURES_OK        8
#define STATUS_FAILED             0x80

#define RESET_TIMEOUT_US          100000
#define CONFIG_READ_TRIES         16

static uint8_t rd8(volatile uint8_t *b, unsigned o) { return b[o]; }
static uint16_t rd16(volatile uint8_t *b, unsigned o) { return *(volatile uint16_t *)(b + o); }
static uint32_t rd32(volatile uint8_t *b, unsigned o) { return *(volatile uint32_t *)(b + o); }
static void wr8(volatile uint8_t *b, unsigned o, uint8_t v) { b[o] = v; }
static void wr16(volatile uint8_t *b, unsigned o, uint16_t v) { *(volatile uint16_t *)(b + o) = v; }
static void wr32(volatile uint8_t *b, unsigned o, uint32_t v) { *(volatile uint32_t *)(b + o) = v; }
/* 64-bit fields as two 32-bit halves, low first (§4.1.3.1). */
static void wr64(volatile uint8_t *b, unsigned o, uint64_t v)
{
    wr32(b, o, (uint32_t)v);
    wr32(b, o + 4, (uint32_t)(v >> 32));
}

/* The region a capability points at, mapped uncached; NULL with *why. */
static volatile uint8_t *map_cap(const struct pci_func *f, uint8_t at, uint32_t need,
                                 const char **why)
{
    struct pci_bar bar;
    uint8_t bar_index = pci_read8(f, (uint8_t)(at + CAP_BAR));
    uint32_t off = pci_read32(f, (uint8_t)(at + CAP_OFFSET));
    uint32_t len = pci_read32(f, (uint8_t)(at + CAP_LENGTH));
    if (bar_index > 5 || !pci_bar(f, bar_index, &bar) || bar.io || !bar.base ||
        (uint64_t)off + len > bar.size || len < need) {
        *why = "a capability points outside its memory BAR";
        return NULL;
    }
    volatile uint8_t *p = mmio_map(bar.base + off, len, MMIO_UNCACHED);
    if (!p)
        *why = "its registers could not be mapped";
    return p;
}

/* Walk the vendor-specific capabilities (§4.1.4: the first of each type
 * the driver understands is the one to use). */
static bool find_caps(struct virtio_pci *v, const char **why)
{
    const struct pci_func *f = v->f;
    uint8_t at = pci_find_cap(f, PCI_CAP_VENDOR);
    for (int i = 0; at && i < CAP_WALK_MAX; i++) {
        if (pci_read8(f, at) == PCI_CAP_VENDOR) {
            uint8_t type = pci_read8(f, (uint8_t)(at + CAP_CFG_TYPE));
            if (type == VIRTIO_PCI_CAP_COMMON_CFG && !v->common) {
                if (!(v->common = map_cap(f, at, CC_LENGTH, why)))
                    return false;
            } else if (type == VIRTIO_PCI_CAP_NOTIFY_CFG && !v->notify) {
                v->notify_mult = pci_read32(f, (uint8_t)(at + CAP_NOTIFY_MULT));
                v->notify_len = pci_read32(f, (uint8_t)(at + CAP_LENGTH));
                if (!(v->notify = map_cap(f, at, 2, why)))
                    return false;
            } else if (type == VIRTIO_PCI_CAP_DEVICE_CFG && !v->device) {
                if (!(v->device = map_cap(f, at, 1, why)))
                    return false;
            }
        }
        at = pci_read8(f, (uint8_t)(at + 1)) & 0xFC;
    }
    if (!v->common || !v->notify || !v->device) {
        *why = "no modern virtio capabilities (a legacy-only device)";
        return false;
    }
    return true;
}

bool virtio_pci_open(struct virtio_pci *v, const struct pci_func *f, const char **why)
{
    *v = (struct virtio_pci){ .f = f };
    if (!find_caps(v, why))
        return false;
    pci_enable(f, PCI_CMD_MEMORY | PCI_CMD_MASTER | PCI_CMD_INTX_OFF);
    /* §3.1.1 step 1: reset, and wait until the device reads 0 (§4.1.4.3.2). */
    wr8(v->common, CC_DEVICE_STATUS, 0);
    struct deadline end = deadline_in_us(RESET_TIMEOUT_US);
    while (rd8(v->common, CC_DEVICE_STATUS)) {
        if (deadline_passed(end)) {
            *why = "reset did not complete in 100 ms";
            virtio_pci_fail(v);
            return false;
        }
        cpu_relax();
    }
    wr16(v->common, CC_MSIX_CONFIG, VIRTIO_MSI_NO_VECTOR);
    wr8(v->common, CC_DEVICE_STATUS, STATUS_ACKNOWLEDGE);                   /* step 2 */
    wr8(v->common, CC_DEVICE_STATUS, STATUS_ACKNOWLEDGE | STATUS_DRIVER);   /* step 3 */
    return true;
}

uint64_t virtio_pci_device_features(struct virtio_pci *v)
{
    wr32(v->common, CC_DEVICE_FEATURE_SELECT, 0);
    uint64_t lo = rd32(v->common, CC_DEVICE_FEATURE);
    wr32(v->common, CC_DEVICE_FEATURE_SELECT, 1);
    return lo | (uint64_t)rd32(v->common, CC_DEVICE_FEATURE) << 32;
}

bool virtio_pci_set_features(struct virtio_pci *v, uint64_t features, const char **why)
{
    wr32(v->common, CC_DRIVER_FEATURE_SELECT, 0);
    wr32(v->common, CC_DRIVER_FEATURE, (uint32_t)features);
    wr32(v->common, CC_DRIVER_FEATURE_SELECT, 1);
    wr32(v->common, CC_DRIVER_FEATURE, (uint32_t)(features >> 32));
    uint8_t s = rd8(v->common, CC_DEVICE_STATUS);
    wr8(v->common, CC_DEVICE_STATUS, s | STATUS_FEATURES_OK);
    if (!(rd8(v->common, CC_DEVICE_STATUS) & STATUS_FEATURES_OK)) {
        *why = "the device refused the driver's features (FEATURES_OK cleared)";
        virtio_pci_fail(v);
        return false;
    }
    return true;
}

bool virtio_pci_queue(struct virtio_pci *v, uint16_t index, uint16_t max_size,
                      struct virtio_queue *out, const char **why)
{
    volatile uint8_t *c = v->common;
    wr16(c, CC_QUEUE_SELECT, index);
    uint16_t size = rd16(c, CC_QUEUE_SIZE);
    if (!size) {
        *why = "a virtqueue the device needs is missing";
        virtio_pci_fail(v);
        return false;
    }
    if (size > max_size)
        size = max_size;
    while (size & (size - 1))                    /* split rings: a power of two (§2.6) */
        size &= (uint16_t)(size - 1);
    void *mem = mem_alloc(virtq_bytes(size), VIRTQ_ALIGN);
    if (!mem) {
        *why = "out of memory for a virtqueue";
        virtio_pci_fail(v);
        return false;
    }
    virtq_init(&out->q, size, mem);
    out->index = index;
    wr16(c, CC_QUEUE_SIZE, size);
    wr16(c, CC_QUEUE_MSIX_VECTOR, VIRTIO_MSI_NO_VECTOR);
    wr64(c, CC_QUEUE_DESC, virtq_desc_addr(&out->q));
    wr64(c, CC_QUEUE_DRIVER, virtq_avail_addr(&out->q));
    wr64(c, CC_QUEUE_DEVICE, virtq_used_addr(&out->q));
    uint64_t at = (uint64_t)rd16(c, CC_QUEUE_NOTIFY_OFF) * v->notify_mult;
    if (at + 2 > v->notify_len) {
        *why = "a queue's notify address lies outside the notification area";
        virtio_pci_fail(v);
        return false;
    }
    out->notify = (volatile uint16_t *)(v->notify + at);
    wr16(c, CC_QUEUE_ENABLE, 1);
    return true;
}

void virtio_pci_kick(struct virtio_queue *q)
{
    if (virtq_kick_wanted(&q->q))
        *q->notify = q->index;                   /* §4.1.5.2: the queue's index */
}

void virtio_pci_driver_ok(struct virtio_pci *v)
{
    wr8(v->common, CC_DEVICE_STATUS, rd8(v->common, CC_DEVICE_STATUS) | STATUS_DRIVER_OK);
}

void virtio_pci_fail(struct virtio_pci *v)
{
    wr8(v->common, CC_DEVICE_STATUS, rd8(v->common, CC_DEVICE_STATUS) | STATUS_FAILED);
}

void virtio_pci_read_config(struct virtio_pci *v, unsigned off, uint8_t *buf, unsigned len)
{
    for (int t = 0; t < CONFIG_READ_TRIES; t++) {
        uint8_t gen = rd8(v->common, CC_CONFIG_GENERATION);
        for (unsigned i = 0; i < len; i++)
            buf[i] = rd8(v->device, off + i);
        if (rd8(v->common, CC_CONFIG_GENERATION) == gen)
            return;
    }
}
