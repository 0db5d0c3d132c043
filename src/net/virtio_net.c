/* virtio_net.c — virtio-net over the modern PCI transport (VIRTIO 1.1
 * §5.1): receiveq1 (queue 0) always holds empty buffers, transmitq1
 * (queue 1) one buffer per frame sent. Every buffer starts with the
 * 12-byte struct virtio_net_hdr (§5.1.6: VIRTIO_F_VERSION_1 makes
 * num_buffers part of it even without VIRTIO_NET_F_MRG_RXBUF). */
#include "net/virtio_net.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "mm/mem.h"
#include "net/virtio_pci.h"
#include "net/virtq.h"

#define VIRTIO_NET_DEVICE_MODERN     0x1041   /* 0x1040 + device ID 1 (§4.1.2.1) */
#define VIRTIO_NET_DEVICE_TRANSITION 0x1000

/* §5.1.3: feature bits. */
#define VIRTIO_NET_F_MAC             (1ull << 5)
#define VIRTIO_NET_F_STATUS          (1ull << 16)

/* §5.1.4: struct virtio_net_config. */
#define NET_CFG_MAC                  0
#define NET_CFG_STATUS               6
#define VIRTIO_NET_S_LINK_UP         1

#define RX_QUEUE                     0
#define TX_QUEUE                     1
#define QUEUE_ENTRIES                128

/* §5.1.6: struct virtio_net_hdr, all zero on send (no checksum or GSO
 * offload negotiated). */
struct virtio_net_hdr {
    uint8_t flags;
    uint8_t gso_type;
    uint16_t hdr_len;
    uint16_t gso_size;
    uint16_t csum_start;
    uint16_t csum_offset;
    uint16_t num_buffers;
};
_Static_assert(sizeof(struct virtio_net_hdr) == 12, "virtio_net_hdr is 12 bytes with VERSION_1");

#define HDR_LEN sizeof(struct virtio_net_hdr)
#define BUF_LEN 2048                 /* header + the longest frame (1514, 1518 tagged) */

struct vnet {
    struct virtio_pci pci;
    struct virtio_queue rx, tx;
    uint8_t *rx_buf, *tx_buf;         /* QUEUE_ENTRIES * BUF_LEN each */
    bool tx_busy[QUEUE_ENTRIES];
    bool has_status;
};

bool virtio_net_match(const struct pci_func *f)
{
    return f->vendor == VIRTIO_PCI_VENDOR &&
           (f->device == VIRTIO_NET_DEVICE_MODERN || f->device == VIRTIO_NET_DEVICE_TRANSITION);
}

/* Take back every transmit buffer the device is done with. */
static void tx_reclaim(struct vnet *v)
{
    uint16_t id;
    uint32_t len;
    while (virtq_take(&v->tx.q, &id, &len))
        if (id < v->tx.q.size)
            v->tx_busy[id] = false;
}

static bool vnet_send(struct nic *n, const void *frame, unsigned len)
{
    struct vnet *v = n->priv;
    if (len > NIC_FRAME_MAX)
        return false;
    tx_reclaim(v);
    uint16_t id = v->tx.q.avail_idx & (v->tx.q.size - 1);
    if (v->tx_busy[id]) {
        n->tx_full++;
        return false;
    }
    uint8_t *b = v->tx_buf + (size_t)id * BUF_LEN;
    memset(b, 0, HDR_LEN);
    memcpy(b + HDR_LEN, frame, len);
    if (len < NIC_FRAME_MIN) {
        memset(b + HDR_LEN + len, 0, NIC_FRAME_MIN - len);
        len = NIC_FRAME_MIN;
    }
    v->tx_busy[id] = true;
    virtq_set(&v->tx.q, id, (uint64_t)(uintptr_t)b, (uint32_t)(HDR_LEN + len), false);
    virtq_offer(&v->tx.q, id);
    virtio_pci_kick(&v->tx);
    return true;
}

static unsigned vnet_recv(struct nic *n, void *buf, unsigned cap)
{
    struct vnet *v = n->priv;
    uint16_t id;
    uint32_t len;
    unsigned got = 0;
    while (!got && virtq_take(&v->rx.q, &id, &len)) {
        if (id >= v->rx.q.size) {               /* a used id the driver never offered */
            n->rx_errors++;
            continue;
        }
        if (len < HDR_LEN + 14 || len > BUF_LEN || len - HDR_LEN > cap)
            n->rx_errors++;
        else
            memcpy(buf, v->rx_buf + (size_t)id * BUF_LEN + HDR_LEN, got = len - HDR_LEN);
        virtq_offer(&v->rx.q, id);               /* the same buffer, empty again */
        virtio_pci_kick(&v->rx);
    }
    return got;
}

static bool vnet_link_up(struct nic *n)
{
    struct vnet *v = n->priv;
    if (!v->has_status)
        return true;                            /* §5.1.4: without STATUS the link is up */
    uint8_t s[2];
    virtio_pci_read_config(&v->pci, NET_CFG_STATUS, s, 2);
    return (s[0] | s[1] << 8) & VIRTIO_NET_S_LINK_UP;
}

static const struct nic_ops vnet_ops = { vnet_send, vnet_recv, vnet_link_up };

/* Features, queues, receive buffers, MAC (§5.1.5 device initialization). */
static bool bring_up(struct vnet *v, struct nic *n, const char **why)
{
    uint64_t offered = virtio_pci_device_features(&v->pci);
    if (!(offered & VIRTIO_F_VERSION_1)) {
        *why = "no VIRTIO_F_VERSION_1 (a legacy device)";
        virtio_pci_fail(&v->pci);
        return false;
    }
    /* ACCESS_PLATFORM (§6): the device goes through the platform's DMA
     * translation; with none set up that is the identity map the buffers'
     * addresses already are, and a device that offers it may refuse a
     * driver that does not take it. */
    uint64_t want = VIRTIO_F_VERSION_1 |
                    (offered & (VIRTIO_NET_F_MAC | VIRTIO_NET_F_STATUS | VIRTIO_F_ACCESS_PLATFORM));
    if (!virtio_pci_set_features(&v->pci, want, why) ||
        !virtio_pci_queue(&v->pci, RX_QUEUE, QUEUE_ENTRIES, &v->rx, why) ||
        !virtio_pci_queue(&v->pci, TX_QUEUE, QUEUE_ENTRIES, &v->tx, why))
        return false;
    v->has_status = want & VIRTIO_NET_F_STATUS;
    v->rx_buf = mem_alloc((size_t)QUEUE_ENTRIES * BUF_LEN, 64);
    v->tx_buf = mem_alloc((size_t)QUEUE_ENTRIES * BUF_LEN, 64);
    if (!v->rx_buf || !v->tx_buf) {
        *why = "out of memory for frame buffers";
        virtio_pci_fail(&v->pci);
        return false;
    }
    for (uint16_t i = 0; i < v->rx.q.size; i++) {
        virtq_set(&v->rx.q, i, (uint64_t)(uintptr_t)(v->rx_buf + (size_t)i * BUF_LEN), BUF_LEN,
                  true);
        virtq_offer(&v->rx.q, i);
    }
    if (want & VIRTIO_NET_F_MAC) {
        virtio_pci_read_config(&v->pci, NET_CFG_MAC, n->mac, 6);
    } else {                                     /* a locally administered address of its place */
        const struct pci_func *f = v->pci.f;
        const uint8_t mac[6] = { 0x02, 0x76, 0x69, f->bus, f->dev, f->fn };
        memcpy(n->mac, mac, 6);
    }
    virtio_pci_driver_ok(&v->pci);
    virtio_pci_kick(&v->rx);
    return true;
}

bool virtio_net_start(const struct pci_func *f, struct nic *n)
{
    const char *why = "";
    struct vnet *v = mem_alloc(sizeof *v, 64);
    ksnprintf(n->where, sizeof n->where, "%02x:%02x.%x", f->bus, f->dev, f->fn);
    if (!v) {
        kprintf("net: virtio %s: out of memory; skipped\n", n->where);
        return false;
    }
    if (!virtio_pci_open(&v->pci, f, &why) || !bring_up(v, n, &why)) {
        kprintf("net: virtio %s: %s; skipped\n", n->where, why);
        return false;
    }
    n->ops = &vnet_ops;
    n->model = "virtio";
    n->priv = v;
    kprintf("net: %s virtio-net (1af4:%04x): %02x:%02x:%02x:%02x:%02x:%02x, link %s\n",
            n->where, f->device, n->mac[0], n->mac[1], n->mac[2], n->mac[3], n->mac[4],
            n->mac[5], vnet_link_up(n) ? "up" : "down");
    return true;
}
