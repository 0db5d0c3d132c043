/* ipconf.c — the address state machine (ipconf.h). */
#include "net/ipconf.h"
#include <stddef.h>

#define RETRY_FIRST_US  250000ull      /* first retransmission; doubled up to RETRY_MAX_US */
#define RETRY_MAX_US    4000000ull
#define REQUEST_TRIES   4              /* REQUESTs before starting over with a DISCOVER */
#define LINKLOCAL_MASK  0xFFFF0000u
#define DEFAULT_LEASE_S 3600u
#define DEFAULT_MASK    0xFFFFFF00u    /* a reply without option 1 */
#define MULTICAST_FIRST 0xE0000000u    /* 224.0.0.0: multicast, then reserved, then broadcast */
#define LOOPBACK_NET    127u

static uint32_t link_local(const uint8_t mac[ETH_ALEN])
{
    uint32_t hi = 1u + mac[4] % 254u, lo = mac[5];
    if (lo == 0 || lo == 255)
        lo = 1;
    return IPCONF_LINKLOCAL | hi << 8 | lo;
}

static void set_ip(struct ipconf *c, uint32_t ip, uint32_t mask, uint32_t gw)
{
    if (c->ip != ip || c->mask != mask || c->gw != gw)
        c->changes++;
    c->ip = ip, c->mask = mask, c->gw = gw;
}

static void discover(struct ipconf *c, uint64_t now_us)
{
    c->state = IPCONF_SELECTING;
    c->since_us = c->next_us = now_us;
    c->tries = 0;
    c->xid++;
}

void ipconf_start(struct ipconf *c, const uint8_t mac[ETH_ALEN], uint32_t xid,
                  uint32_t static_ip, uint32_t static_mask, uint64_t now_us)
{
    *c = (struct ipconf){ 0 };
    for (unsigned i = 0; i < ETH_ALEN; i++)
        c->mac[i] = mac[i];
    c->xid = xid;
    c->state = IPCONF_NO_LINK;
    if (static_ip) {
        c->state = IPCONF_STATIC;
        set_ip(c, static_ip, static_mask, 0);
    }
    (void)now_us;
}

void ipconf_link(struct ipconf *c, bool up, uint64_t now_us)
{
    if (c->state == IPCONF_STATIC)
        return;
    if (up && c->state == IPCONF_NO_LINK)
        discover(c, now_us);
    else if (!up)
        c->state = IPCONF_NO_LINK;
}

static uint64_t backoff(const struct ipconf *c)
{
    uint64_t d = RETRY_FIRST_US << (c->tries < 5 ? c->tries : 5);
    return d < RETRY_MAX_US ? d : RETRY_MAX_US;
}

static void take_ack(struct ipconf *c, const struct dhcp_msg *in, uint64_t now_us)
{
    c->state = IPCONF_BOUND;
    c->fallback = false;
    c->lease_s = in->lease_s ? in->lease_s : DEFAULT_LEASE_S;
    c->renew_us = now_us + (uint64_t)c->lease_s * 1000000ull / 2;   /* T1 */
    set_ip(c, in->yiaddr, in->mask ? in->mask : DEFAULT_MASK, in->router);
}

const char *ipconf_unusable(uint32_t ip, uint32_t mask)
{
    if (!ip)
        return "the zero address";
    if (ip == 0xFFFFFFFFu)
        return "the broadcast address";
    if (ip >= MULTICAST_FIRST)
        return "a multicast or reserved address";
    if (ip >> 24 == LOOPBACK_NET)
        return "a loopback address";
    if (mask && mask != 0xFFFFFFFFu && (ip | mask) == 0xFFFFFFFFu)
        return "its subnet's broadcast address";
    if (mask && (mask | 1u) != 0xFFFFFFFFu && !(ip & ~mask))
        return "its subnet's network address";   /* (a /31 has no such address) */
    return NULL;
}

/* A server's offer or ack names an address no host may have: refused
 * (said by net.c through refusals), and the exchange goes on. */
static bool refused(struct ipconf *c, const struct dhcp_msg *in)
{
    if (!ipconf_unusable(in->yiaddr, in->mask ? in->mask : DEFAULT_MASK))
        return false;
    c->refused_ip = in->yiaddr;
    c->refused_mask = in->mask ? in->mask : DEFAULT_MASK;
    c->refused_server = in->server;
    c->refusals++;
    return true;
}

unsigned ipconf_step(struct ipconf *c, uint64_t now_us, const struct dhcp_msg *in,
                     uint8_t *out)
{
    switch (c->state) {
    case IPCONF_SELECTING:
        if (in && in->type == DHCP_OFFER && !refused(c, in)) {
            c->state = IPCONF_REQUESTING;
            c->offered = in->yiaddr;
            c->server = in->server;
            c->tries = 0;
            c->next_us = now_us;
        }
        break;
    case IPCONF_REQUESTING:
        if (in && in->type == DHCP_ACK && !refused(c, in)) {
            take_ack(c, in, now_us);
            return 0;
        }
        if (in && in->type == DHCP_NAK) {
            discover(c, now_us);
            break;
        }
        if (c->tries >= REQUEST_TRIES && now_us >= c->next_us) {
            if (c->ip && !c->fallback) {  /* a renewal nobody answered: keep the address */
                c->state = IPCONF_BOUND;
                c->renew_us = now_us + RETRY_MAX_US * 8;
                return 0;
            }
            discover(c, now_us);
        }
        break;
    case IPCONF_BOUND:
        if (now_us >= c->renew_us) {
            c->state = IPCONF_REQUESTING;
            c->offered = c->ip;
            c->tries = 0;
            c->next_us = now_us;
        }
        return 0;
    default:
        return 0;
    }
    if (!c->ip && now_us - c->since_us >= IPCONF_FALLBACK_US) {
        c->fallback = true;
        set_ip(c, link_local(c->mac), LINKLOCAL_MASK, 0);
    }
    if (now_us < c->next_us)
        return 0;
    c->next_us = now_us + backoff(c);
    c->tries++;
    if (c->state == IPCONF_SELECTING)
        return dhcp_put(out, DHCP_DISCOVER, c->xid, c->mac, 0, 0);
    return dhcp_put(out, DHCP_REQUEST, c->xid, c->mac, c->offered, c->server);
}
