/* udp.c — UDP headers and their checksum over the pseudo-header (udp.h). */
#include "net/udp.h"
#include "lib/bytes.h"

static uint32_t pseudo_sum(uint32_t src, uint32_t dst, unsigned udp_len)
{
    return (src >> 16) + (src & 0xFFFF) + (dst >> 16) + (dst & 0xFFFF) + IPV4_PROTO_UDP +
           udp_len;
}

bool udp_parse(const struct ipv4_view *ip, struct udp_view *u)
{
    if (ip->proto != IPV4_PROTO_UDP || ip->len < UDP_HDR_LEN)
        return false;
    const uint8_t *p = ip->payload;
    unsigned len = be16(p + 4);
    if (len < UDP_HDR_LEN || len > ip->len)
        return false;
    if (be16(p + 6) && ipv4_fold(ipv4_sum(p, len, pseudo_sum(ip->src, ip->dst, len))) != 0)
        return false;
    u->sport = be16(p);
    u->dport = be16(p + 2);
    u->payload = p + UDP_HDR_LEN;
    u->len = len - UDP_HDR_LEN;
    return true;
}

void udp_put(uint8_t *p, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
             unsigned payload_len)
{
    unsigned len = UDP_HDR_LEN + payload_len;
    put_be16(p, sport);
    put_be16(p + 2, dport);
    put_be16(p + 4, (uint16_t)len);
    put_be16(p + 6, 0);
    uint16_t sum = ipv4_fold(ipv4_sum(p, len, pseudo_sum(src, dst, len)));
    put_be16(p + 6, sum ? sum : 0xFFFF);   /* 0 would mean "no checksum" */
}
