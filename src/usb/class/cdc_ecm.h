/* cdc_ecm.h — USB Ethernet adapters of the CDC Ethernet Control Model
 * (USB CDC ECM 1.2) and the Network Control Model (CDC NCM 1.0), as a
 * class driver of usbstack.c's table and a NIC of the network stack
 * (net/nic.h, model "usb").
 *
 * The driver looks through every configuration of the device for an ECM
 * or NCM function (QEMU's usb-net offers RNDIS first and ECM second; many
 * adapters a vendor configuration first), selects it, reads the MAC from
 * the iMACAddress string, (NCM) agrees on NTB16 blocks of 2 KiB, selects
 * the data interface's alternate setting with the bulk endpoints, and
 * sets the packet filter (directed and broadcast). Frames go out as one
 * waited bulk OUT transfer each (NCM: one frame per NTB16); eight bulk IN
 * transfers stay queued for frames coming in (NCM: every frame of each
 * block); the notification endpoint's NETWORK_CONNECTION says whether the
 * cable is in (until one arrives, the link counts as up). RNDIS is named,
 * not driven. Boot CPU at enumeration; the NIC then joins net.h's list
 * (net_add_nic), so an adapter must be plugged in at boot to be used.
 * ECM is tested with QEMU's usb-net; NCM only through its unit-tested
 * blocks (ncm.h): no QEMU device speaks it. */
#ifndef USB_CLASS_CDC_ECM_H
#define USB_CLASS_CDC_ECM_H
#include "usb/core/usb.h"

/* The class driver's attach (a row for communications devices, and one
 * for vendor-specific ones whose other configuration may be ECM or NCM). */
void cdc_ecm_attach(struct usb_dev *d, const struct usb_cfg_info *cfg,
                    const struct usb_if_info *iface);

#endif
