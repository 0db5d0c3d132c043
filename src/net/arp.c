/* arp.c — ARP messages and the asked-for cache (arp.h). */
#include "net/arp.h"
#include "lib/bytes.h"

#define ARP_HTYPE_ETHER 1
#define ARP_PTYPE_IPV4  0x0800

bool arp_parse(const uint8_t *p, unsigned len, struct arp_msg *m)
{
    if (len < ARP_LEN || be16(p) != ARP_HTYPE_ETHER || be16(p + 2) != ARP_PTYPE_IPV4 ||
        p[4] != ETH_ALEN || p[5] != 4)
        return false;
    m->op = be16(p + 6);
    for (unsigned i = 0; i < ETH_ALEN; i++) {
        m->sha[i] = p[8 + i];
        m->tha[i] = p[18 + i];
    }
    m->spa = be32(p + 14);
    m->tpa = be32(p + 24);
    return m->op == ARP_OP_REQUEST || m->op == ARP_OP_REPLY;
}

unsigned arp_put(uint8_t *p, const struct arp_msg *m)
{
    put_be16(p, ARP_HTYPE_ETHER);
    put_be16(p + 2, ARP_PTYPE_IPV4);
    p[4] = ETH_ALEN;
    p[5] = 4;
    put_be16(p + 6, m->op);
    for (unsigned i = 0; i < ETH_ALEN; i++) {
        p[8 + i] = m->sha[i];
        p[18 + i] = m->tha[i];
    }
    put_be32(p + 14, m->spa);
    put_be32(p + 24, m->tpa);
    return ARP_LEN;
}

static struct arp_entry *entry_for(struct arp_cache *c, uint32_t ip)
{
    for (unsigned i = 0; i < ARP_CACHE_SIZE; i++)
        if (c->e[i].ip == ip)
            return &c->e[i];
    return 0;
}

void arp_cache_want(struct arp_cache *c, uint32_t ip)
{
    if (!ip || entry_for(c, ip))
        return;
    struct arp_entry *e = &c->e[c->next];
    c->next = (c->next + 1) % ARP_CACHE_SIZE;
    e->ip = ip;
    e->known = false;
}

bool arp_cache_learn(struct arp_cache *c, uint32_t ip, const uint8_t mac[ETH_ALEN])
{
    struct arp_entry *e = ip ? entry_for(c, ip) : 0;
    if (!e || (mac[0] & 1))            /* never a multicast/broadcast sender */
        return false;
    for (unsigned i = 0; i < ETH_ALEN; i++)
        e->mac[i] = mac[i];
    e->known = true;
    return true;
}

const uint8_t *arp_cache_find(const struct arp_cache *c, uint32_t ip)
{
    for (unsigned i = 0; i < ARP_CACHE_SIZE; i++)
        if (c->e[i].ip == ip && c->e[i].known)
            return c->e[i].mac;
    return 0;
}
