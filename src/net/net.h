/* net.h — the network interface in use and its UDP/IPv4 stack: choice
 * of the NIC, its address (ipconf.h), ARP, sending to the host and
 * polling for frames.
 *
 * One NIC is used: the first with link among those the drivers started
 * (PCI ones through nicpci.h, others, such as USB adapters, through
 * net_add_nic before net_init), else the first.
 *
 * Locking: every use of the NIC and the stack's state happens under the
 * net lock, which is never held while printing and never held long (one
 * frame sent or a bounded batch received). Whoever takes it may be any
 * CPU: the idle loop's poll, a console line (netcon.h), a dump from a
 * fault or an NMI (recorder/dumpnet.h). A CPU that faulted may be stopped
 * while holding it: a fault's dump takes it over (steal) after waiting;
 * nothing else ever does. */
#ifndef NET_NET_H
#define NET_NET_H
#include <stdbool.h>
#include <stdint.h>
#include "firmware/cmdline.h"
#include "net/nic.h"

#define NET_NIC_MAX      4
#define NET_PAYLOAD_MAX  1400         /* UDP payload bytes per datagram sent */
#define NET_BOOT_WAIT_US 300000ull    /* at boot: link and an address, at most this long */
#define NET_STEAL_US     1000000ull   /* a fault's dump waits this long, then takes over */

/* A driver outside PCI adds its started NIC (boot CPU, before net_init). */
bool net_add_nic(struct nic *n);
/* Start the PCI drivers, choose the NIC, wait at most NET_BOOT_WAIT_US
 * for link and an address; later ones (autonegotiation takes seconds on
 * real ports, DHCP servers may too) come from the idle loop's polls.
 * Boot CPU, after tsc_init and usb_init. */
void net_init(const struct boot_config *cfg);
/* READY's fields: "net=e1000:00:03.0 ip=10.0.2.15"; ip=pending (link, no
 * address yet), ip=nolink (no link yet); "net=none ip=none" (no NIC a
 * driver takes), "net=off ip=none" (net=off). */
void net_ready_fields(char *buf, unsigned cap);
/* A NIC is in use (it may have no link or address yet). */
bool net_active(void);
/* Link and an address now (read without the lock: a snapshot). */
bool net_up(void);
/* Link now, address or not (the same snapshot). */
bool net_link_now(void);
/* This NIC's MAC as 12 lower-case hex digits (the host names its log after it). */
const char *net_mac_text(void);
/* net.to= names one host (not the broadcast address). */
bool net_to_unicast(void);

/* The lock: wait_us 0 tries once. steal: after wait_us, take it anyway
 * (a fault's dump only). True when this CPU holds it. */
bool net_take(uint64_t wait_us, bool steal);
void net_give(void);
/* This CPU holds the lock (an NMI that interrupted the stack must not use it). */
bool net_held_here(void);

/* --- with the lock held --- */
/* Link up and an address: a datagram can leave. */
bool net_ready(void);
/* One UDP datagram from NETPROTO_PORT to net.to (len <= NET_PAYLOAD_MAX).
 * Waits (bounded) for ARP and for a free transmit slot; false when it
 * could not be sent (counted). */
bool net_send_host(const void *payload, unsigned len);
/* The same to ip:port (a host that asked): refused (false) for the
 * zero, broadcast or multicast address, which a forged source may name. */
bool net_send_to(uint32_t ip, uint16_t port, const void *payload, unsigned len);
/* Handle up to budget received frames (ARP, DHCP, datagrams to
 * NETPROTO_PORT go to the receiver); also follows the link and DHCP. */
void net_poll_locked(unsigned budget);
/* Who gets datagrams to NETPROTO_PORT (netcon.c): called with the lock
 * held; it must not print. */
void net_set_receiver(void (*fn)(uint32_t ip, uint16_t port, const uint8_t *p, unsigned len));

/* --- without the lock --- */
/* Say what changed since the last call (link up/down, a new address):
 * on the console, so never with the lock held. Keys CPU. */
void net_report(void);
/* What the stack did so far (read without the lock: a snapshot). */
struct net_counts {
    uint64_t sent;                     /* UDP datagrams to the host */
    uint64_t not_sent;                 /* no link or address, no ARP answer, ring stayed full */
    uint64_t received;                 /* frames the NIC handed over */
    uint64_t rx_errors, tx_full;       /* the driver's (nic.h) */
};
void net_counts(struct net_counts *c);

#endif
