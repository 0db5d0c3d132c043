/* desc.c — configuration descriptor parsing. */
#include "usb/core/desc.h"
#include "lib/bytes.h"

#define CFG_HEADER_LEN 9
#define IF_DESC_LEN    9
#define EP_DESC_LEN    7
#define EP_DIR_IN      0x80
#define EP_NUM_MASK    0x0F

static void add_endpoint(struct usb_if_info *i, const uint8_t *p)
{
    if (i->n_eps >= USB_MAX_EPS)
        return;
    struct usb_ep_info *e = &i->ep[i->n_eps++];
    e->addr = p[2];
    e->attr = p[3];
    e->mps = (uint16_t)(le16(p + 4) & 0x7FF);
    e->interval = p[6];
}

static struct usb_if_info *add_interface(struct usb_cfg_info *c, const uint8_t *p)
{
    if (p[3] != 0 || c->n_ifs >= USB_MAX_IFS)   /* alternate settings: not used */
        return NULL;
    struct usb_if_info *i = &c->ifs[c->n_ifs++];
    *i = (struct usb_if_info){ .num = p[2], .alt = p[3], .cls = p[5], .sub = p[6], .proto = p[7] };
    return i;
}

bool usb_parse_config(const uint8_t *buf, size_t len, struct usb_cfg_info *out,
                      const char **why)
{
    *out = (struct usb_cfg_info){ 0 };
    if (len < CFG_HEADER_LEN || buf[0] < CFG_HEADER_LEN || buf[1] != USB_DESC_CONFIG) {
        *why = "not a configuration descriptor";
        return false;
    }
    out->value = buf[5];
    struct usb_if_info *cur = NULL;
    for (size_t off = buf[0]; off < len; off += buf[off]) {
        const uint8_t *p = buf + off;
        if (len - off < 2 || p[0] < 2 || p[0] > len - off) {
            *why = "descriptor runs past the end";
            return false;
        }
        if (p[1] == USB_DESC_INTERFACE && p[0] >= IF_DESC_LEN)
            cur = add_interface(out, p);
        else if (p[1] == USB_DESC_ENDPOINT && p[0] >= EP_DESC_LEN && cur)
            add_endpoint(cur, p);
    }
    return true;
}

uint8_t usb_ep_dci(uint8_t addr)
{
    return (uint8_t)((addr & EP_NUM_MASK) * 2 + ((addr & EP_DIR_IN) ? 1 : 0));
}

const struct usb_if_info *usb_find_if(const struct usb_cfg_info *c, int cls, int sub,
                                      int proto)
{
    for (unsigned k = 0; k < c->n_ifs; k++) {
        const struct usb_if_info *i = &c->ifs[k];
        if ((cls < 0 || i->cls == cls) && (sub < 0 || i->sub == sub) &&
            (proto < 0 || i->proto == proto))
            return i;
    }
    return NULL;
}
