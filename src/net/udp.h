/* udp.h — UDP headers (RFC 768) over IPv4. Pure code, host-tested. */
#ifndef NET_UDP_H
#define NET_UDP_H
#include <stdbool.h>
#include <stdint.h>
#include "net/ipv4.h"

#define UDP_HDR_LEN 8

struct udp_view {
    uint16_t sport, dport;
    const uint8_t *payload;
    unsigned len;
};

/* False for a datagram whose length field is out of the IP payload's
 * bounds or whose checksum (when not 0: "none") is wrong. */
bool udp_parse(const struct ipv4_view *ip, struct udp_view *u);
/* Write the header at p, whose payload_len bytes at p + UDP_HDR_LEN are
 * already in place (they are summed into the checksum). */
void udp_put(uint8_t *p, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
             unsigned payload_len);

#endif
