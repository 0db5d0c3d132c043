/* ipconf.h — how this machine gets its IPv4 address: a DHCP client
 * (RFC 2131 §4.4: DISCOVER, OFFER, REQUEST, ACK; renewal at T1), a fixed
 * address (net.ip=), and when no server answers within IPCONF_FALLBACK_US
 * a link-local address (RFC 3927's 169.254/16, picked from the MAC, no
 * conflict probing) while DISCOVERs go on.
 *
 * A pure state machine, host-tested: the caller (net.c) feeds it the
 * time, the link state and each server reply, and broadcasts what it
 * returns. */
#ifndef NET_IPCONF_H
#define NET_IPCONF_H
#include <stdbool.h>
#include <stdint.h>
#include "net/dhcp.h"

#define IPCONF_FALLBACK_US 3000000ull  /* no DHCP answer by then: link-local */
#define IPCONF_LINKLOCAL   0xA9FE0000u /* 169.254.0.0/16 */

enum ipconf_state {
    IPCONF_NO_LINK,
    IPCONF_SELECTING,
    IPCONF_REQUESTING,
    IPCONF_BOUND,
    IPCONF_STATIC,
};

struct ipconf {
    uint8_t state;                    /* enum ipconf_state */
    bool fallback;                 /* using the link-local address meanwhile */
    uint8_t mac[ETH_ALEN];
    uint32_t xid;
    uint32_t ip, mask, gw;             /* the address in use (0: none) */
    uint32_t offered, server;
    uint32_t lease_s;
    uint64_t next_us;                  /* when to send (again) */
    uint64_t since_us;                 /* when this try for an address began */
    uint64_t renew_us;                 /* BOUND: when to renew (T1) */
    unsigned tries;
    uint32_t changes;                  /* counts every change of ip: news for net.c */
    uint32_t refusals;                 /* offers and acks of an unusable address: news too */
    uint32_t refused_ip, refused_mask, refused_server;   /* the last of them */
};

/* Begin: static_ip != 0 fixes the address (with static_mask), else DHCP
 * once the link is up. */
void ipconf_start(struct ipconf *c, const uint8_t mac[ETH_ALEN], uint32_t xid,
                  uint32_t static_ip, uint32_t static_mask, uint64_t now_us);
/* The link went up or down. Down keeps the address (a cable pulled and put
 * back is the same network, most likely) but stops DHCP; up starts a new
 * DISCOVER unless the address is fixed. */
void ipconf_link(struct ipconf *c, bool up, uint64_t now_us);
/* Why no host may have ip (with this mask: 0 for none), or NULL: the
 * zero, broadcast, multicast or loopback address, the subnet's broadcast.
 * A DHCP offer or ack of such an address is refused (counted in
 * refusals) as net.ip= refuses it. */
const char *ipconf_unusable(uint32_t ip, uint32_t mask);
/* One step: in is a reply parsed for this xid (or NULL). Returns the
 * length of a DHCP message written to out (DHCP_MSG_MAX bytes) that the
 * caller broadcasts, or 0. */
unsigned ipconf_step(struct ipconf *c, uint64_t now_us, const struct dhcp_msg *in,
                     uint8_t *out);

#endif
