/* eth.h — Ethernet II frame headers (IEEE 802.3 clause 3.2.6 with the
 * EtherType in the length/type field): read one, write one.
 *
 * Pure code, also built on the host (test/unit/test_netparse.c). */
#ifndef NET_ETH_H
#define NET_ETH_H
#include <stdbool.h>
#include <stdint.h>

#define ETH_ALEN      6
#define ETH_HDR_LEN   14              /* destination, source, EtherType */
#define ETH_TYPE_IPV4 0x0800
#define ETH_TYPE_ARP  0x0806

extern const uint8_t eth_broadcast[ETH_ALEN];

struct eth_view {
    const uint8_t *dst, *src;
    uint16_t type;
    const uint8_t *payload;            /* after the header */
    unsigned len;                      /* payload bytes (padding included) */
};

/* False for a frame too short to hold a header, or whose EtherType is a
 * length (802.3 LLC, < 0x0600): those carry nothing this stack reads. */
bool eth_parse(const uint8_t *frame, unsigned len, struct eth_view *v);
/* Write the header at frame[0..ETH_HDR_LEN). */
void eth_put(uint8_t *frame, const uint8_t dst[ETH_ALEN], const uint8_t src[ETH_ALEN],
             uint16_t type);
bool eth_is_broadcast(const uint8_t mac[ETH_ALEN]);

#endif
