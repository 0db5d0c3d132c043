/* dhcp.c — DHCP message layout (dhcp.h). Field offsets: RFC 2131 §2,
 * figure 1; options follow the magic cookie at offset 236. */
#include "net/dhcp.h"
#include "lib/bytes.h"

#define BOOTP_REQUEST  1
#define BOOTP_REPLY    2
#define HTYPE_ETHER    1
#define OFF_XID        4
#define OFF_FLAGS      10
#define OFF_YIADDR     16
#define OFF_CHADDR     28
#define OFF_MAGIC      236
#define OFF_OPTIONS    240
#define DHCP_MAGIC     0x63825363u
#define FLAG_BROADCAST 0x8000         /* answer by broadcast: we have no address yet */

#define OPT_PAD        0
#define OPT_MASK       1
#define OPT_ROUTER     3
#define OPT_REQ_IP     50
#define OPT_LEASE      51
#define OPT_TYPE       53
#define OPT_SERVER     54
#define OPT_PARAMS     55
#define OPT_END        255

unsigned dhcp_put(uint8_t *p, uint8_t type, uint32_t xid, const uint8_t mac[ETH_ALEN],
                  uint32_t want_ip, uint32_t server)
{
    for (unsigned i = 0; i < DHCP_MSG_MAX; i++)
        p[i] = 0;
    p[0] = BOOTP_REQUEST;
    p[1] = HTYPE_ETHER;
    p[2] = ETH_ALEN;
    put_be32(p + OFF_XID, xid);
    put_be16(p + OFF_FLAGS, FLAG_BROADCAST);
    for (unsigned i = 0; i < ETH_ALEN; i++)
        p[OFF_CHADDR + i] = mac[i];
    put_be32(p + OFF_MAGIC, DHCP_MAGIC);
    uint8_t *o = p + OFF_OPTIONS;
    *o++ = OPT_TYPE, *o++ = 1, *o++ = type;
    if (want_ip) {
        *o++ = OPT_REQ_IP, *o++ = 4;
        put_be32(o, want_ip);
        o += 4;
    }
    if (server) {
        *o++ = OPT_SERVER, *o++ = 4;
        put_be32(o, server);
        o += 4;
    }
    *o++ = OPT_PARAMS, *o++ = 2, *o++ = OPT_MASK, *o++ = OPT_ROUTER;
    *o++ = OPT_END;
    return DHCP_MSG_MAX;               /* padded to the BOOTP minimum */
}

bool dhcp_parse(const uint8_t *p, unsigned len, uint32_t xid, const uint8_t mac[ETH_ALEN],
                struct dhcp_msg *m)
{
    if (len < OFF_OPTIONS || p[0] != BOOTP_REPLY || p[1] != HTYPE_ETHER || p[2] != ETH_ALEN ||
        be32(p + OFF_XID) != xid || be32(p + OFF_MAGIC) != DHCP_MAGIC)
        return false;
    for (unsigned i = 0; i < ETH_ALEN; i++)
        if (p[OFF_CHADDR + i] != mac[i])
            return false;
    *m = (struct dhcp_msg){ 0 };
    m->yiaddr = be32(p + OFF_YIADDR);
    for (unsigned at = OFF_OPTIONS; at < len;) {
        uint8_t code = p[at++];
        if (code == OPT_PAD)
            continue;
        if (code == OPT_END || at >= len)
            break;
        unsigned n = p[at++];
        if (n > len - at)
            return false;              /* an option running past the datagram */
        const uint8_t *v = p + at;
        if (code == OPT_TYPE && n == 1)
            m->type = v[0];
        else if (code == OPT_SERVER && n == 4)
            m->server = be32(v);
        else if (code == OPT_MASK && n == 4)
            m->mask = be32(v);
        else if (code == OPT_ROUTER && n >= 4)
            m->router = be32(v);
        else if (code == OPT_LEASE && n == 4)
            m->lease_s = be32(v);
        at += n;
    }
    return m->type == DHCP_OFFER || m->type == DHCP_ACK || m->type == DHCP_NAK;
}
