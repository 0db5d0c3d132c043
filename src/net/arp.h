/* arp.h — ARP for IPv4 over Ethernet (RFC 826): the 28-byte message, and
 * a small cache of the addresses this machine asked for.
 *
 * The cache learns only answers to questions it asked (arp_cache_want),
 * so a storm of ARP traffic from elsewhere cannot push out the entry for
 * the host the console goes to. Pure code, host-tested. */
#ifndef NET_ARP_H
#define NET_ARP_H
#include <stdbool.h>
#include <stdint.h>
#include "net/eth.h"

#define ARP_LEN        28
#define ARP_OP_REQUEST 1
#define ARP_OP_REPLY   2
#define ARP_CACHE_SIZE 8

struct arp_msg {
    uint16_t op;
    uint8_t sha[ETH_ALEN];            /* sender hardware address */
    uint32_t spa;                      /* sender protocol address (host order) */
    uint8_t tha[ETH_ALEN];
    uint32_t tpa;
};

/* False unless it is Ethernet/IPv4 ARP (htype 1, ptype 0x0800, 6/4) with
 * op request or reply. */
bool arp_parse(const uint8_t *p, unsigned len, struct arp_msg *m);
unsigned arp_put(uint8_t *p, const struct arp_msg *m);   /* returns ARP_LEN */

struct arp_entry {
    uint32_t ip;                       /* 0: free */
    bool known;                    /* mac valid */
    uint8_t mac[ETH_ALEN];
};
struct arp_cache {
    struct arp_entry e[ARP_CACHE_SIZE];
    unsigned next;                     /* round-robin victim */
};

/* Mark ip as wanted (asked for); an existing entry is kept. */
void arp_cache_want(struct arp_cache *c, uint32_t ip);
/* An answer: stored only when ip was wanted. True when stored. */
bool arp_cache_learn(struct arp_cache *c, uint32_t ip, const uint8_t mac[ETH_ALEN]);
/* The MAC for ip, or NULL when not known (yet). */
const uint8_t *arp_cache_find(const struct arp_cache *c, uint32_t ip);

#endif
