/* dhcp.h — DHCP messages (RFC 2131, options RFC 2132): the client's
 * DISCOVER and REQUEST, and reading a server's OFFER, ACK or NAK.
 * Pure code, host-tested; the client's steps are ipconf.c's. */
#ifndef NET_DHCP_H
#define NET_DHCP_H
#include <stdbool.h>
#include <stdint.h>
#include "net/eth.h"

#define DHCP_SERVER_PORT 67
#define DHCP_CLIENT_PORT 68
#define DHCP_MSG_MAX     300            /* what dhcp_put writes at most (BOOTP minimum) */

enum dhcp_type {
    DHCP_DISCOVER = 1,
    DHCP_OFFER = 2,
    DHCP_REQUEST = 3,
    DHCP_ACK = 5,
    DHCP_NAK = 6,
};

struct dhcp_msg {
    uint8_t type;                     /* enum dhcp_type */
    uint32_t yiaddr;                   /* the address offered */
    uint32_t server;                   /* option 54 (server identifier), 0 if absent */
    uint32_t mask;                     /* option 1, 0 if absent */
    uint32_t router;                   /* option 3 (the first), 0 if absent */
    uint32_t lease_s;                  /* option 51, 0 if absent */
};

/* A DISCOVER (want_ip and server 0) or REQUEST into p (DHCP_MSG_MAX
 * bytes); returns its length. */
unsigned dhcp_put(uint8_t *p, uint8_t type, uint32_t xid, const uint8_t mac[ETH_ALEN],
                  uint32_t want_ip, uint32_t server);
/* A server's reply to this client (op 2, this xid and MAC, the magic
 * cookie, a message type option); options are read with every length
 * checked against len. */
bool dhcp_parse(const uint8_t *p, unsigned len, uint32_t xid, const uint8_t mac[ETH_ALEN],
                struct dhcp_msg *m);

#endif
