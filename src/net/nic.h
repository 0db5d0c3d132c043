/* nic.h — a network interface as the network stack sees it: a polled
 * mover of Ethernet frames, whichever driver is under it (Intel e1000
 * family, virtio-net, Realtek RTL8111, USB CDC-ECM).
 *
 * Drivers run without interrupts: the stack calls send and recv when it
 * wants to, from the idle loop or from a dump on any CPU. A driver is not
 * re-entrant; the stack serializes every call on one nic. Every wait
 * inside a driver is bounded. Frames are whole Ethernet frames from the
 * destination MAC on, without the FCS (the hardware adds and checks it).
 *
 * A driver's start function (its header) fills a struct nic and returns
 * true, or names on the console why it leaves the device alone and
 * returns false. */
#ifndef NET_NIC_H
#define NET_NIC_H
#include <stdbool.h>
#include <stdint.h>

#define NIC_FRAME_MAX 1514            /* 14-byte header + 1500-byte payload, no FCS */
#define NIC_FRAME_MIN 60              /* shorter frames are padded by send */

struct nic;

struct nic_ops {
    /* Queue one frame of len bytes (NIC_FRAME_MIN..NIC_FRAME_MAX; shorter
     * ones are padded with zeros). False when the transmit ring is full
     * now (nothing queued: the caller polls again), or len is out of range. */
    bool (*send)(struct nic *n, const void *frame, unsigned len);
    /* Copy the next good received frame into buf (cap bytes) and return
     * its length; 0 when none is waiting. Frames with errors, or longer
     * than cap, are dropped and counted in rx_errors. */
    unsigned (*recv)(struct nic *n, void *buf, unsigned cap);
    /* Whether the link is up now (one register read; no waiting). */
    bool (*link_up)(struct nic *n);
};

struct nic {
    const struct nic_ops *ops;
    const char *model;                /* "e1000", "e1000e", "virtio", "rtl8111", "usb" */
    char where[24];                   /* "00:03.0" (PCI) or the USB device's place */
    uint8_t mac[6];
    uint64_t rx_errors;               /* frames dropped by the driver (bad, too long) */
    uint64_t tx_full;                 /* sends refused for a full ring */
    void *priv;                       /* the driver's state */
};

#endif
