/* cdc_ecm.c — a CDC Ethernet network adapter: ECM (USB CDC ECM 1.2), or
 * NCM (CDC NCM 1.0: frames in NTB16 transfer blocks, ncm.h). */
#include "usb/class/cdc_ecm.h"
#include "lib/bytes.h"
#include "lib/kstring.h"
#include "mm/mem.h"
#include "net/net.h"
#include "net/nic.h"
#include "usb/class/ecmdesc.h"
#include "usb/class/ncm.h"
#include "usb/core/say.h"
#include "usb/core/usbdev.h"
#include "usb/core/usblock.h"
#include "usb/core/xfer.h"

#define DEV_DESC_LEN                   18
#define DEV_NUM_CONFIGS                17        /* bNumConfigurations */
#define CONFIG_MAX                     512
#define STRING_MAX                     64
#define DESC_STRING                    3
#define REQ_SET_INTERFACE              0x0B
#define CDC_SET_ETHERNET_PACKET_FILTER 0x43   /* ECM 1.2 §6.2.4 */
#define PACKET_TYPE_DIRECTED           0x04
#define PACKET_TYPE_BROADCAST          0x08
#define NCM_GET_NTB_PARAMETERS         0x80   /* NCM 1.0 §6.2.1 */
#define NCM_SET_NTB_INPUT_SIZE         0x86   /* §6.2.7 */
#define RX_QUEUED                      8         /* bulk IN transfers kept queued */
#define BUF_LEN                        2048      /* one frame (ECM) or one NTB (NCM, asked for) */
#define RX_SIZE_MAX                    65536     /* an NCM function that keeps larger NTBs is refused */
#define TX_TIMEOUT_US                  1000000

struct ecm {
    struct usb_dev *dev;
    struct nic nic;
    uint8_t dci_in, dci_out, dci_notify;
    uint16_t mps_out, notify_len;
    bool link, in_halted, notify_halted;
    unsigned rx_done, rx_taken;       /* completions seen, transfers taken (running counts) */
    uint32_t rx_size;                 /* bytes per receive buffer: a power of two */
    uint8_t rx_cc[RX_QUEUED];
    uint32_t rx_len[RX_QUEUED];
    uint8_t *rx_buf, *frame_buf, *ntb_buf, *notify_buf;
    bool ncm;
    struct ncm_params ntb;            /* NCM: what the function said */
    uint16_t ntb_seq;
    bool reading;                     /* NCM: frames left in the NTB of rx slot rd_slot */
    unsigned rd_slot;
    struct ncm_reader rd;
};

/* Buffers are aligned to their power-of-two size: none crosses 64 KiB. */
static uint8_t *rx_slot(struct ecm *e, unsigned i) { return e->rx_buf + (size_t)i * e->rx_size; }

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
        e->rx_len[i] = residual <= e->rx_size ? e->rx_size - residual : 0;
        e->in_halted |= !ok;
    } else if (dci == e->dci_notify) {
        unsigned len = residual <= e->notify_len ? e->notify_len - residual : 0;
        const uint8_t *p = e->notify_buf;
        if (!ok) {
            e->notify_halted = true;
            return;
        }
        bool link;
        if (ecm_notify_link(p, len, &link))
            e->link = link;
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
        e->reading = false;
        for (unsigned i = 0; i < RX_QUEUED; i++)
            usb_queue(e->dev, e->dci_in, rx_slot(e, i), e->rx_size);
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
    if (!usb_can_wait(e->dev) || !e->link)
        return false; /* no link: an adapter may NAK until the bound, and a timeout drops the device */
    uint8_t *out = e->frame_buf;
    memcpy(out, frame, len);
    if (len < NIC_FRAME_MIN) {
        memset(out + len, 0, NIC_FRAME_MIN - len);
        len = NIC_FRAME_MIN;
    }
    if (e->ncm) {                                /* one frame per NTB16 */
        out = e->ntb_buf;
        if (!(len = ncm_build(out, BUF_LEN - 1, e->ntb_seq++, &e->ntb, e->frame_buf, len)))
            return false;
    }
    /* ECM 1.2 §3.3.1, NCM 1.0 §3.2.2: a transfer that fills its last packet
     * exactly needs a short packet after it (unless an NTB is as long as
     * the function takes); one zero byte past it makes one. */
    if (len % e->mps_out == 0 && !(e->ncm && len == e->ntb.out_max))
        out[len++] = 0;
    uint32_t actual;
    return usb_transfer(e->dev, e->dci_out, out, len, &actual, TX_TIMEOUT_US) == USB_OK;
}

static bool ecm_send(struct nic *n, const void *frame, unsigned len)
{
    if (len > NIC_FRAME_MAX || !usb_try_enter())
        return false;
    bool sent = send_locked(n->priv, frame, len);
    usb_leave();
    return sent;
}

/* NCM: the next frame of the NTB being read; at its end the buffer goes
 * back to the device and 0 is returned. */
static unsigned ncm_frame(struct ecm *e, void *buf, unsigned cap)
{
    const uint8_t *f;
    unsigned len;
    while (ncm_next(&e->rd, &f, &len)) {
        if (len <= cap) {
            memcpy(buf, f, len);
            return len;
        }
        e->nic.rx_errors++;
    }
    e->nic.rx_errors += e->rd.bad;
    e->reading = false;
    usb_queue(e->dev, e->dci_in, rx_slot(e, e->rd_slot), e->rx_size);
    return 0;
}

static unsigned recv_locked(struct nic *n, void *buf, unsigned cap)
{
    struct ecm *e = n->priv;
    if (!usb_can_wait(e->dev))
        return 0;                                /* gone, or inside another wait */
    recover(e);
    if (e->rx_taken == e->rx_done && !e->reading)
        usb_poll_completions(e->dev);
    for (;;) {
        unsigned got = e->reading ? ncm_frame(e, buf, cap) : 0;
        if (got)
            return got;
        if (e->rx_taken == e->rx_done || e->in_halted)
            return 0;
        unsigned i = e->rx_taken++ % RX_QUEUED, len = e->rx_len[i];
        if (e->ncm && e->rx_cc[i] && ncm_open(&e->rd, rx_slot(e, i), len)) {
            e->reading = true;                   /* its frames, then the buffer goes back */
            e->rd_slot = i;
            continue;
        }
        if (!e->ncm && e->rx_cc[i] && len >= 14 && len <= cap)
            memcpy(buf, rx_slot(e, i), got = len);
        else if (len)                            /* a zero-length packet alone is no frame */
            n->rx_errors++;
        usb_queue(e->dev, e->dci_in, rx_slot(e, i), e->rx_size);
        if (got)
            return got;
    }
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

/* NCM, before the data interface's bulk setting is chosen (NCM 1.0
 * §7.2): the function's NTB parameters, and NTBs that fit our 2 KiB
 * buffers (SET_NTB_INPUT_SIZE); a function that refuses keeps its own
 * size, and the buffers grow to hold it. False when NTB16 is not offered
 * or the size passes RX_SIZE_MAX. */
static bool ncm_negotiate(struct usb_dev *d, uint8_t *buf, const struct ecm_info *info,
                          struct ncm_params *p, uint32_t *rx_size)
{
    if (usb_control(d, REQ_IN | REQ_CLASS | REQ_IFACE, NCM_GET_NTB_PARAMETERS, 0, info->ctrl_if,
                    buf, NCM_PARAMS_LEN, NULL) != USB_OK ||
        !ncm_parse_params(buf, NCM_PARAMS_LEN, p))
        return false;
    *rx_size = BUF_LEN;
    if (p->in_max <= BUF_LEN)
        return true;
    put_le32(buf, BUF_LEN);
    if (usb_control(d, REQ_CLASS | REQ_IFACE, NCM_SET_NTB_INPUT_SIZE, 0, info->ctrl_if, buf, 4,
                    NULL) == USB_OK)
        return true;
    while (*rx_size < p->in_max && *rx_size < RX_SIZE_MAX)
        *rx_size <<= 1;
    return *rx_size >= p->in_max;
}

/* Buffers, endpoints and the device's state from what the descriptors say. */
static struct ecm *setup(struct usb_dev *d, const struct ecm_info *info, const uint8_t mac[6],
                         uint32_t rx_size)
{
    struct ecm *e = mem_alloc(sizeof *e, 8);
    uint8_t *rx = mem_alloc((size_t)RX_QUEUED * rx_size, rx_size);
    uint8_t *tx = mem_alloc(2 * BUF_LEN, 2 * BUF_LEN), *nb = mem_alloc(STRING_MAX, STRING_MAX);
    if (!e || !rx || !tx || !nb)
        return NULL;
    *e = (struct ecm){ .dev = d, .rx_buf = rx, .rx_size = rx_size, .frame_buf = tx, .ntb_buf = tx + BUF_LEN, .notify_buf = nb, .link = true, .ncm = info->ncm };
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
    struct ncm_params ntb = { 0 };
    uint32_t rx_size = BUF_LEN;
    if (info.ncm && !ncm_negotiate(d, buf, &info, &ntb, &rx_size)) {
        usb_say(d, "network adapter %04x:%04x (CDC-NCM): no NTB16 parameters it and we agree "
                   "on; left alone",
                d->vendor, d->product);
        return;
    }
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
    struct ecm *e = setup(d, &info, mac, rx_size);
    if (!e) {
        usb_say(d, "network adapter: out of memory; left alone");
        return;
    }
    e->ntb = ntb;
    d->drv = e;
    d->on_transfer = on_transfer;
    d->async_dcis = 1u << e->dci_in | (e->dci_notify ? 1u << e->dci_notify : 0);
    for (unsigned i = 0; i < RX_QUEUED; i++)
        usb_queue(d, e->dci_in, rx_slot(e, i), e->rx_size);
    queue_notify(e);
    /* net_init chooses once, at boot: an adapter plugged in later is named, not used. */
    bool late = net_active(), taken = !late && net_add_nic(&e->nic);
    usb_say(d, "network adapter %04x:%04x (CDC-%s, %s), MAC %02x:%02x:%02x:%02x:%02x:%02x%s",
            d->vendor, d->product, info.ncm ? "NCM" : "ECM", usb_speed_name(d->speed), mac[0],
            mac[1], mac[2], mac[3], mac[4], mac[5],
            taken ? "" : late ? ": plugged in after boot; the network keeps the NIC it chose"
                              : ": more adapters than the network stack takes; unused");
}
