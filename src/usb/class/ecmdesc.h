/* ecmdesc.h — what a CDC Ethernet function's descriptors say, ECM or
 * NCM (USB CDC 1.2 §5.2.3, ECM 1.2 §5.4, NCM 1.0 §5.2): the
 * communications interface with its
 * Union and Ethernet Networking functional descriptors and its
 * notification endpoint, and the data interface's alternate setting with
 * the bulk IN/OUT pair. Also the MAC address string (iMACAddress: 12 hex
 * digits in UTF-16LE). Pure: no hardware, host unit tested
 * (test/unit/test_ecmdesc.c) on QEMU usb-net's descriptors and damaged ones. */
#ifndef USB_CLASS_ECMDESC_H
#define USB_CLASS_ECMDESC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "usb/core/desc.h"

#define USB_CLASS_CDC      0x02   /* communications (interface and device class) */
#define USB_CLASS_CDC_DATA 0x0A
#define CDC_SUBCLASS_ECM   0x06
#define CDC_SUBCLASS_NCM   0x0D

struct ecm_info {
    bool ncm;                     /* NCM (frames in transfer blocks), else ECM */
    uint8_t cfg_value;               /* bConfigurationValue */
    uint8_t ctrl_if;                 /* the communications interface */
    uint8_t data_if, data_alt;       /* the data interface and its setting with bulk endpoints */
    uint8_t mac_string;              /* iMACAddress */
    uint16_t max_segment;             /* wMaxSegmentSize */
    bool has_notify;
    struct usb_ep_info notify, bulk_in, bulk_out;
};

/* Parse one whole configuration descriptor: its first ECM or NCM
 * function. False with *why when it has none (*why names what it has
 * instead: RNDIS or ACM) or is malformed. */
bool ecm_parse_config(const uint8_t *buf, size_t len, struct ecm_info *out, const char **why);
/* A notification from the interrupt endpoint (len bytes arrived): when
 * it is NetworkConnection (ECM 1.2 §6.3.1, NCM 1.0 §6.3), whether the
 * cable is connected (*link) and true; false for any other notification
 * (ConnectionSpeedChange, RNDIS's "response available", short ones).
 * Adapters that never send one keep the link state they started with. */
bool ecm_notify_link(const uint8_t *p, size_t len, bool *link);
/* A string descriptor holding 12 hex digits -> 6 bytes. False otherwise. */
bool ecm_parse_mac(const uint8_t *desc, size_t len, uint8_t mac[6]);

#endif
