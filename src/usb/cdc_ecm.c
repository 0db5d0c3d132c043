/* cdc_ecm.c — a CDC ECM network adapter (USB CDC ECM 1.2). */
#include "usb/cdc_ecm.h"
#include "usb/ecmdesc.h"
#include "usb/say.h"
#include "usb/usbdev.h"
#include "usb/usblock.h"
#include "usb/xfer.h"
#include "usb/xhci_hw.h"
#include "net/net.h"
#include "net/nic.h"
#include "lib/bytes.h"
#include "lib/kstring.h"
#include "mm/mem.h"

#define DEV_DESC_LEN        18
#define DEV_NUM_CONFIGS     17        /* bNumConfigurations */
#define CONFIG_MAX          512
#define STRING_MAX          64
#define DESC_STRING         3
#define REQ_SET_INTERFACE   0x0B
#define CDC_SET_ETHERNET_PACKET_FILTER 0x43   /* ECM 1.2 §6.2.4 */
#define PACKET_TYPE_DIRECTED  0x04
#define PACKET_TYPE_BROADCAST 0x08
#define NOTIFY_REQTYPE      0xA1      /* class, interface, device to host */
#define NETWORK_CONNECTION  0x00      /* ECM 1.2 §6.3.1: wValue 1 connected */
#define NOTIFY_HDR_LEN      8
#define RX_QUEUED           8         /* bulk IN transfers kept queued */
#define BUF_LEN             2048      /* one frame; 2 KiB-aligned: never crosses 64 KiB */
#define TX_TIMEOUT_US       1000000

struct ecm {
    struct usb_dev *dev;
    struct nic nic;
    uint8_t dci_in, dci_out, dci_notify;
    uint16_t mps_out, notify_len;
    bool link, in_halted, notify_halted;
    unsigned rx_done, rx_taken;       /* completions seen, frames taken (running counts) */
    uint8_t rx_cc[RX_QUEUED];
    uint16_t rx_len[RX_QUEUED];
    uint8_t *rx_buf, *tx_buf, *notify_buf;
};

static uint8_t *rx_slot(struct ecm *e, unsigned i) { return e->rx_buf + (size_t)i * BUF_LEN; }

static void queue_notify(struct ecm *e)
{
    if (e->dci_notify)
        usb_queue(e->dev, e->dci_notify, e->notify_buf, e->notify_len);
}

/* Runs inside the controller's event handling: no commands, no waits.
 * Bulk IN completions arrive in the order the transfers were queued, and
 * buffers are queued round-robin, so completion k filled buffer k % RX_QUEUED. */
static void on_transfer(struct usb_dev *d, uint8_t dci, uint8_t cc, uint32_t residual)
{
    struct ecm *e = d->drv;
    bool ok = cc == CC_SUCCESS || cc == CC_SHORT_PACKET;
    if (dci == e->dci_in) {
        unsigned i = e->rx_done++ % RX_QUEUED;
        e->rx_cc[i] = ok;
        e->rx_len[i] = (uint16_t)(residual <= BUF_LEN ? BUF_LEN - residual : 0);
        e->in_halted |= !ok;
    } else if (dci == e->dci_notify) {
        unsigned len = residual <= e->notify_len ? e->notify_len - residual : 0;
        const uint8_t *p = e->notify_buf;
        if (!ok) {
            e->notify_halted = true;
            return;
        }
        if (len >= NOTIFY_HDR_LEN && p[0] == NOTIFY_REQTYPE && p[1] == NETWORK_CONNECTION)
            e->link = le16(p + 2) != 0;
        queue_notify(e);
    }
}

/* Halted endpoints back, outside event handling: a halted bulk IN loses
 * what was queued on it (Set TR Dequeue skips it), so all of it again. */
static void recover(struct ecm *e)
{
    if (e->in_halted && usb_ep_reset(e->dev, e->dci_in) == USB_OK) {
        e->in_halted = false;
        e->nic.rx_errors++;
        e->rx_done = e->rx_taken = 0;
        for (unsigned i = 0; i < RX_QUEUED; i++)
            usb_queue(e->dev, e->dci_in, rx_slot(e, i), BUF_LEN);
    }
    if (e->notify_halted && usb_ep_reset(e->dev, e->dci_notify) == USB_OK) {
        e->notify_halted = false;
        queue_notify(e);
    }
}

/* The nic_ops run on whichever CPU holds the net lock: each takes the
 * USB code for itself first (usblock.h), and does nothing when another
 * CPU, or this one further out, is inside it (the stack calls again). */
static bool send_locked(struct ecm *e, const void *frame, unsigned len)
{
    if (!usb_can_wait(e->dev))
        return false;
    memcpy(e->tx_buf, frame, len);
    if (len < NIC_FRAME_MIN) {
        memset(e->tx_buf + len, 0, NIC_FRAME_MIN - len);
        len = NIC_FRAME_MIN;
    }
    /* ECM 1.2 §3.3.1: a frame that fills its last packet exactly needs a
     * short packet after it; one zero byte past the frame makes it one. */
    if (len % e->mps_out == 0)
        e->tx_buf[len++] = 0;
    uint32_t actual;
    return usb_transfer(e->dev, e->dci_out, e->tx_buf, len, &actual, TX_TIMEOUT_US) == USB_OK;
}

static bool ecm_send(struct nic *n, const void *frame, unsigned len)
{
    if (len > NIC_FRAME_MAX || !usb_try_enter())
        return false;
    bool sent = send_locked(n->priv, frame, len);
    usb_leave();
    return sent;
}

static unsigned recv_locked(struct nic *n, void *buf, unsigned cap)
{
    struct ecm *e = n->priv;
    if (!usb_can_wait(e->dev))
        return 0;                                /* gone, or inside another wait */
    recover(e);
    if (e->rx_taken == e->rx_done)
        usb_poll_completions(e->dev);
    while (e->rx_taken != e->rx_done && !e->in_halted) {
        unsigned i = e->rx_taken++ % RX_QUEUED, len = e->rx_len[i], got = 0;
        if (e->rx_cc[i] && len >= 14 && len <= cap)
            memcpy(buf, rx_slot(e, i), got = len);
        else if (len)                            /* a zero-length packet alone is no frame */
            n->rx_errors++;
        usb_queue(e->dev, e->dci_in, rx_slot(e, i), BUF_LEN);
        if (got)
            return got;
    }
    return 0;
}

static unsigned ecm_recv(struct nic *n, void *buf, unsigned cap)
{
    if (!usb_try_enter())
        return 0;
    unsigned got = recv_locked(n, buf, cap);
    usb_leave();
    return got;
}

static bool ecm_link_up(struct nic *n)
{
    struct ecm *e = n->priv;
    if (usb_try_enter()) {
        if (usb_can_wait(e->dev))
            usb_poll_completions(e->dev);        /* a NETWORK_CONNECTION waiting */
        usb_leave();
    }
    return !e->dev->dead && e->link;
}

static const struct nic_ops ecm_ops = { ecm_send, ecm_recv, ecm_link_up };

/* The first configuration with an ECM function; *why says what the
 * first one offers when none has. */
static bool find_ecm(struct usb_dev *d, uint8_t *buf, struct ecm_info *info, const char **why)
{
    if (usb_get_descriptor(d, USB_DESC_DEVICE, 0, buf, DEV_DESC_LEN) != USB_OK) {
        *why = "device descriptor unreadable";
        return false;
    }
    unsigned n = buf[DEV_NUM_CONFIGS];
    const char *first = "no configuration";
    for (unsigned k = 0; k < n; k++) {
        const char *w = "configuration descriptor unreadable";
        uint16_t total = 0;
        if (usb_get_descriptor(d, USB_DESC_CONFIG, (uint8_t)k, buf, 9) == USB_OK) {
            total = le16(buf + 2) < CONFIG_MAX ? le16(buf + 2) : CONFIG_MAX;
            if (usb_get_descriptor(d, USB_DESC_CONFIG, (uint8_t)k, buf, total) == USB_OK &&
                ecm_parse_config(buf, total, info, &w))
                return true;
        }
        if (!k)
            first = w;
    }
    *why = first;
    return false;
}

/* The MAC from the iMACAddress string, asked in the device's first language. */
static bool read_mac(struct usb_dev *d, uint8_t *buf, uint8_t index, uint8_t mac[6])
{
    if (!index || usb_get_descriptor(d, DESC_STRING, 0, buf, 4) != USB_OK || buf[0] < 4)
        return false;
    uint16_t lang = le16(buf + 2);
    memset(buf, 0, STRING_MAX);
    return usb_control(d, REQ_IN, REQ_GET_DESCRIPTOR, (uint16_t)(DESC_STRING << 8 | index), lang,
                       buf, STRING_MAX, NULL) == USB_OK &&
           ecm_parse_mac(buf, STRING_MAX, mac);
}

/* "00:04.0 port 1.3" -> "00:04.0-1.3": READY's fields hold no spaces. */
static void place_name(const char *where, char *out, unsigned cap)
{
    static const char port[] = " port ";
    unsigned o = 0;
    for (unsigned i = 0; where[i] && o + 1 < cap; i++) {
        if (!strncmp(where + i, port, sizeof port - 1)) {
            out[o++] = '-';
            i += sizeof port - 2;
        } else {
            out[o++] = where[i] == ' ' ? '-' : where[i];
        }
    }
    out[o] = 0;
}

/* Buffers, endpoints and the device's state from what the descriptors say. */
static struct ecm *setup(struct usb_dev *d, const struct ecm_info *info, const uint8_t mac[6])
{
    struct ecm *e = mem_alloc(sizeof *e, 8);
    uint8_t *rx = mem_alloc((size_t)RX_QUEUED * BUF_LEN, BUF_LEN);
    uint8_t *tx = mem_alloc(BUF_LEN, BUF_LEN), *nb = mem_alloc(STRING_MAX, STRING_MAX);
    if (!e || !rx || !tx || !nb)
        return NULL;
    *e = (struct ecm){ .dev = d, .rx_buf = rx, .tx_buf = tx, .notify_buf = nb, .link = true };
    e->dci_in = usb_ep_dci(info->bulk_in.addr);
    e->dci_out = usb_ep_dci(info->bulk_out.addr);
    e->mps_out = info->bulk_out.mps ? info->bulk_out.mps : 64;
    if (info->has_notify) {
        e->dci_notify = usb_ep_dci(info->notify.addr);
        e->notify_len = info->notify.mps && info->notify.mps <= STRING_MAX ? info->notify.mps
                                                                             : STRING_MAX;
    }
    e->nic = (struct nic){ .ops = &ecm_ops, .model = "usb", .priv = e };
    memcpy(e->nic.mac, mac, 6);
    place_name(d->where, e->nic.where, sizeof e->nic.where);
    return e;
}

void cdc_ecm_attach(struct usb_dev *d, const struct usb_cfg_info *cfg,
                    const struct usb_if_info *iface)
{
    (void)cfg, (void)iface;                      /* every configuration is looked at */
    uint8_t *buf = mem_alloc(CONFIG_MAX, 64);
    struct ecm_info info;
    const char *why = "out of memory";
    uint8_t mac[6];
    if (!buf || !find_ecm(d, buf, &info, &why)) {
        usb_say(d, "device %04x:%04x: %s; left alone", d->vendor, d->product, why);
        return;
    }
    if (!read_mac(d, buf, info.mac_string, mac)) {
        usb_say(d, "network adapter %04x:%04x: no MAC address string (iMACAddress); left alone",
                d->vendor, d->product);
        return;
    }
    struct usb_ep_info eps[3] = { info.bulk_in, info.bulk_out, info.notify };
    if (!usb_configure(d, info.cfg_value, eps, info.has_notify ? 3 : 2, 0))
        return;
    int cc = 0;
    if (usb_control(d, REQ_IFACE, REQ_SET_INTERFACE, info.data_alt, info.data_if, NULL, 0,
                    &cc) != USB_OK) {
        usb_say(d, "network adapter: SET_INTERFACE %u alt %u failed (completion %d); left alone",
                info.data_if, info.data_alt, cc);
        return;
    }
    /* Directed and broadcast frames; a device may STALL it (ECM 1.2 §6.2.4
     * makes it required, but some ignore it) and still pass them. */
    usb_control(d, REQ_CLASS | REQ_IFACE, CDC_SET_ETHERNET_PACKET_FILTER,
                PACKET_TYPE_DIRECTED | PACKET_TYPE_BROADCAST, info.ctrl_if, NULL, 0, NULL);
    struct ecm *e = setup(d, &info, mac);
    if (!e) {
        usb_say(d, "network adapter: out of memory; left alone");
        return;
    }
    d->drv = e;
    d->on_transfer = on_transfer;
    d->async_dcis = 1u << e->dci_in | (e->dci_notify ? 1u << e->dci_notify : 0);
    for (unsigned i = 0; i < RX_QUEUED; i++)
        usb_queue(d, e->dci_in, rx_slot(e, i), BUF_LEN);
    queue_notify(e);
    bool taken = net_add_nic(&e->nic);
    usb_say(d, "network adapter %04x:%04x (CDC-ECM, %s), MAC %02x:%02x:%02x:%02x:%02x:%02x%s",
            d->vendor, d->product, usb_speed_name(d->speed), mac[0], mac[1], mac[2], mac[3],
            mac[4], mac[5], taken ? "" : ": more adapters than the network stack takes; unused");
}
