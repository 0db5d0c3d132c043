/* ipv4.c — IPv4 headers and checksums (ipv4.h). */
#include "net/ipv4.h"
#include "lib/bytes.h"

#define IPV4_VERSION   4
#define IPV4_FLAG_DF   0x4000
#define IPV4_FLAG_MF   0x2000
#define IPV4_FRAG_MASK 0x1FFF

uint32_t ipv4_sum(const uint8_t *p, unsigned len, uint32_t sum)
{
    unsigned i = 0;
    for (; i + 1 < len; i += 2)
        sum += be16(p + i);
    if (i < len)
        sum += (uint32_t)p[i] << 8;
    return sum;
}

uint16_t ipv4_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xFFFF) + (sum >> 16);
    return (uint16_t)~sum;
}

bool ipv4_parse(const uint8_t *p, unsigned len, struct ipv4_view *v)
{
    if (len < IPV4_HDR_LEN || p[0] >> 4 != IPV4_VERSION)
        return false;
    unsigned ihl = (p[0] & 0xF) * 4u, total = be16(p + 2);
    if (ihl < IPV4_HDR_LEN || total < ihl || total > len)
        return false;
    if (be16(p + 6) & (IPV4_FLAG_MF | IPV4_FRAG_MASK))
        return false;                  /* a fragment */
    if (ipv4_fold(ipv4_sum(p, ihl, 0)) != 0)
        return false;
    v->proto = p[9];
    v->src = be32(p + 12);
    v->dst = be32(p + 16);
    v->payload = p + ihl;
    v->len = total - ihl;
    return true;
}

void ipv4_put(uint8_t *p, uint32_t src, uint32_t dst, uint8_t proto, uint16_t id,
              unsigned payload_len)
{
    p[0] = IPV4_VERSION << 4 | IPV4_HDR_LEN / 4;
    p[1] = 0;
    put_be16(p + 2, (uint16_t)(IPV4_HDR_LEN + payload_len));
    put_be16(p + 4, id);
    put_be16(p + 6, IPV4_FLAG_DF);
    p[8] = IPV4_TTL;
    p[9] = proto;
    put_be16(p + 10, 0);
    put_be32(p + 12, src);
    put_be32(p + 16, dst);
    put_be16(p + 10, ipv4_fold(ipv4_sum(p, IPV4_HDR_LEN, 0)));
}

void ipv4_format(uint32_t ip, char *buf)
{
    unsigned at = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        unsigned b = ip >> shift & 0xFF;
        if (b >= 100)
            buf[at++] = (char)('0' + b / 100);
        if (b >= 10)
            buf[at++] = (char)('0' + b / 10 % 10);
        buf[at++] = (char)('0' + b % 10);
        if (shift)
            buf[at++] = '.';
    }
    buf[at] = 0;
}
