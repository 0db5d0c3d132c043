/* ecmdesc.c — a CDC ECM or NCM function in a configuration descriptor. */
#include "usb/class/ecmdesc.h"
#include "lib/bytes.h"

#define CFG_HEADER_LEN     9
#define IF_DESC_LEN        9
#define EP_DESC_LEN        7
#define DESC_STRING        3
#define CS_INTERFACE       0x24     /* class-specific interface descriptor */
#define CDC_UNION          0x06     /* bDescriptorSubtype: Union */
#define CDC_ETHERNET       0x0F     /* Ethernet Networking */
#define UNION_LEN          5
#define NOTIFY_REQTYPE     0xA1     /* class, interface, device to host */
#define NETWORK_CONNECTION 0x00     /* ECM 1.2 §6.3.1: wValue 1 connected */
#define NOTIFY_HDR_LEN     8
#define ETHERNET_LEN       13
#define CDC_SUBCLASS_ACM   0x02
#define CDC_PROTO_VENDOR   0xFF     /* ACM + vendor protocol: RNDIS */
#define MAX_DATA_ALTS      8

/* A data interface setting and its bulk endpoints. */
struct data_alt {
    uint8_t num, alt;
    bool in_ok, out_ok;
    struct usb_ep_info in, out;
};

/* What the walk found so far. */
struct walk {
    int cur_num, cur_alt, cur_cls, cur_sub, cur_proto;
    bool in_ecm;                      /* inside the ECM/NCM communications interface */
    bool found_ecm, found_rndis, found_acm;   /* found_ecm: ECM or NCM */
    bool has_union, has_ethernet;
    unsigned n_alts;
    struct data_alt alts[MAX_DATA_ALTS];
};

static void interface(struct walk *w, struct ecm_info *o, const uint8_t *p)
{
    w->cur_num = p[2];
    w->cur_alt = p[3];
    w->cur_cls = p[5];
    w->cur_sub = p[6];
    w->cur_proto = p[7];
    w->in_ecm = false;
    if (w->cur_cls == USB_CLASS_CDC) {
        if ((w->cur_sub == CDC_SUBCLASS_ECM || w->cur_sub == CDC_SUBCLASS_NCM) &&
            !w->found_ecm) {
            w->found_ecm = w->in_ecm = true;
            o->ncm = w->cur_sub == CDC_SUBCLASS_NCM;
            o->ctrl_if = p[2];
        }
        w->found_rndis |= w->cur_sub == CDC_SUBCLASS_ACM && w->cur_proto == CDC_PROTO_VENDOR;
        w->found_acm |= w->cur_sub == CDC_SUBCLASS_ACM && w->cur_proto != CDC_PROTO_VENDOR;
    } else if (w->cur_cls == USB_CLASS_CDC_DATA && w->n_alts < MAX_DATA_ALTS) {
        w->alts[w->n_alts].num = p[2];
        w->alts[w->n_alts].alt = p[3];
        w->n_alts++;
    }
}

static void functional(struct walk *w, struct ecm_info *o, const uint8_t *p)
{
    if (!w->in_ecm)
        return;
    if (p[2] == CDC_UNION && p[0] >= UNION_LEN && !w->has_union) {
        w->has_union = true;
        o->data_if = p[4];                       /* bSubordinateInterface0 */
    } else if (p[2] == CDC_ETHERNET && p[0] >= ETHERNET_LEN && !w->has_ethernet) {
        w->has_ethernet = true;
        o->mac_string = p[3];
        o->max_segment = le16(p + 8);
    }
}

static void endpoint(struct walk *w, struct ecm_info *o, const uint8_t *p)
{
    struct usb_ep_info e = { .addr = p[2], .attr = p[3], .mps = (uint16_t)(le16(p + 4) & 0x7FF), .interval = p[6] };
    bool in = e.addr & 0x80;
    if (w->in_ecm && (e.attr & 3) == EP_ATTR_INTERRUPT && in && !o->has_notify) {
        o->has_notify = true;
        o->notify = e;
    } else if (w->cur_cls == USB_CLASS_CDC_DATA && w->n_alts &&
               (e.attr & 3) == EP_ATTR_BULK) {
        struct data_alt *a = &w->alts[w->n_alts - 1];
        if (a->num != w->cur_num || a->alt != w->cur_alt)
            return;                              /* a setting past MAX_DATA_ALTS */
        if (in && !a->in_ok) {
            a->in_ok = true;
            a->in = e;
        } else if (!in && !a->out_ok) {
            a->out_ok = true;
            a->out = e;
        }
    }
}

/* What the configuration offers when it is not ECM. */
static const char *instead(const struct walk *w)
{
    if (w->found_rndis)
        return "RNDIS only (not driven here)";
    if (w->found_acm)
        return "a CDC-ACM serial function, not Ethernet";
    return "no CDC Ethernet (ECM or NCM) function";
}

bool ecm_parse_config(const uint8_t *buf, size_t len, struct ecm_info *out, const char **why)
{
    *out = (struct ecm_info){ 0 };
    struct walk w = { .cur_num = -1, .cur_cls = -1 };
    if (len < CFG_HEADER_LEN || buf[0] < CFG_HEADER_LEN || buf[1] != USB_DESC_CONFIG) {
        *why = "not a configuration descriptor";
        return false;
    }
    out->cfg_value = buf[5];
    for (size_t off = buf[0]; off < len; off += buf[off]) {
        const uint8_t *p = buf + off;
        if (len - off < 2 || p[0] < 2 || p[0] > len - off) {
            *why = "descriptor runs past the end";
            return false;
        }
        if (p[1] == USB_DESC_INTERFACE && p[0] >= IF_DESC_LEN)
            interface(&w, out, p);
        else if (p[1] == CS_INTERFACE && p[0] >= 3)
            functional(&w, out, p);
        else if (p[1] == USB_DESC_ENDPOINT && p[0] >= EP_DESC_LEN)
            endpoint(&w, out, p);
    }
    if (!w.found_ecm) {
        *why = instead(&w);
        return false;
    }
    if (!w.has_union || !w.has_ethernet) {
        *why = "ECM/NCM without its Union or Ethernet Networking descriptor";
        return false;
    }
    for (unsigned k = 0; k < w.n_alts; k++)
        if (w.alts[k].num == out->data_if && w.alts[k].in_ok && w.alts[k].out_ok) {
            out->data_alt = w.alts[k].alt;
            out->bulk_in = w.alts[k].in;
            out->bulk_out = w.alts[k].out;
            return true;
        }
    *why = "ECM/NCM data interface without a bulk IN/OUT pair";
    return false;
}

static int hex(uint8_t lo, uint8_t hi)
{
    if (hi)
        return -1;
    if (lo >= '0' && lo <= '9')
        return lo - '0';
    if (lo >= 'a' && lo <= 'f')
        return lo - 'a' + 10;
    if (lo >= 'A' && lo <= 'F')
        return lo - 'A' + 10;
    return -1;
}

bool ecm_parse_mac(const uint8_t *desc, size_t len, uint8_t mac[6])
{
    /* bLength, bDescriptorType, then 12 UTF-16LE code units (ECM 1.2 §5.4). */
    if (len < 2 + 24 || desc[0] < 2 + 24 || desc[1] != DESC_STRING)
        return false;
    for (unsigned i = 0; i < 6; i++) {
        int h = hex(desc[2 + 4 * i], desc[3 + 4 * i]), l = hex(desc[4 + 4 * i], desc[5 + 4 * i]);
        if (h < 0 || l < 0)
            return false;
        mac[i] = (uint8_t)(h << 4 | l);
    }
    return true;
}

bool ecm_notify_link(const uint8_t *p, size_t len, bool *link)
{
    if (len < NOTIFY_HDR_LEN || p[0] != NOTIFY_REQTYPE || p[1] != NETWORK_CONNECTION)
        return false;
    *link = le16(p + 2) != 0;            /* wValue: 1 connected, 0 disconnected */
    return true;
}
