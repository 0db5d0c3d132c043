/* ipv4.h — IPv4 headers (RFC 791) and the Internet checksum (RFC 1071).
 *
 * Addresses are uint32_t in host order (10.0.2.15 = 0x0A00020F). This
 * stack sends unfragmented datagrams with no options and takes only
 * unfragmented ones: a fragment is dropped (nothing it would carry needs
 * more than one frame). Pure code, host-tested. */
#ifndef NET_IPV4_H
#define NET_IPV4_H
#include <stdbool.h>
#include <stdint.h>

#define IPV4_HDR_LEN   20             /* without options: what ipv4_put writes */
#define IPV4_PROTO_UDP 17
#define IPV4_BROADCAST 0xFFFFFFFFu
#define IPV4_TTL       64

struct ipv4_view {
    uint32_t src, dst;
    uint8_t proto;
    const uint8_t *payload;
    unsigned len;                      /* payload bytes by the header's total length */
};

/* Ones'-complement sum of len bytes added to sum (not yet folded). */
uint32_t ipv4_sum(const uint8_t *p, unsigned len, uint32_t sum);
/* Fold a sum to 16 bits and complement it: the checksum field's value. */
uint16_t ipv4_fold(uint32_t sum);
/* False for anything but a whole, unfragmented IPv4 datagram with a
 * good header checksum that fits in len (padding after it is ignored). */
bool ipv4_parse(const uint8_t *p, unsigned len, struct ipv4_view *v);
/* Write a 20-byte header for payload_len bytes that follow it. */
void ipv4_put(uint8_t *p, uint32_t src, uint32_t dst, uint8_t proto, uint16_t id,
              unsigned payload_len);
/* "10.0.2.15" into buf (16 bytes at least). */
void ipv4_format(uint32_t ip, char *buf);

#endif
