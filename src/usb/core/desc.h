/* desc.h — USB descriptors (USB 2.0 §9.6) and the parser of a
 * configuration descriptor into interfaces and endpoints. Pure: no
 * hardware, host unit tested. */
#ifndef USB_CORE_DESC_H
#define USB_CORE_DESC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define USB_DESC_DEVICE    1
#define USB_DESC_CONFIG    2
#define USB_DESC_INTERFACE 4
#define USB_DESC_ENDPOINT  5
#define USB_DESC_HUB       0x29

#define USB_CLASS_HID      3
#define USB_CLASS_MSC      8
#define USB_CLASS_HUB      9

#define USB_MAX_IFS        8
#define USB_MAX_EPS        4         /* per interface */

#define EP_ATTR_BULK       2
#define EP_ATTR_INTERRUPT  3

struct usb_ep_info {
    uint8_t addr;                    /* bit 7: IN */
    uint8_t attr;                    /* transfer type in bits 1:0 */
    uint16_t mps;                     /* max packet size (bits 10:0) */
    uint8_t interval;
};

struct usb_if_info {
    uint8_t num, alt, cls, sub, proto, n_eps;
    struct usb_ep_info ep[USB_MAX_EPS];
};

struct usb_cfg_info {
    uint8_t value;                    /* bConfigurationValue */
    uint8_t n_ifs;
    struct usb_if_info ifs[USB_MAX_IFS];
};

/* Parse a whole configuration descriptor (len bytes). Only alternate
 * setting 0 of each interface is kept. False, with *why set, when the
 * blob is malformed (a descriptor of length < 2 or running past the end,
 * wrong header). Interfaces or endpoints past the limits are dropped. */
bool usb_parse_config(const uint8_t *buf, size_t len, struct usb_cfg_info *out,
                      const char **why);
/* Endpoint address -> device context index (1..31). */
uint8_t usb_ep_dci(uint8_t addr);
/* The first interface of class/subclass/protocol (-1 = any), or NULL. */
const struct usb_if_info *usb_find_if(const struct usb_cfg_info *c, int cls, int sub,
                                      int proto);

#endif
