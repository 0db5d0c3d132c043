/* net.c — the NIC in use, its address and the frames in and out (net.h). */
#include "net/net.h"
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "net/arp.h"
#include "net/dhcp.h"
#include "net/eth.h"
#include "net/ipconf.h"
#include "net/ipv4.h"
#include "net/netproto.h"
#include "net/nicpci.h"
#include "net/udp.h"
#include "time/deadline.h"
#include "time/tsc.h"

#define NO_OWNER        0xFFFFFFFFu
#define ARP_RETRY_US    500000ull      /* ask again at most this often */
#define ARP_WAIT_US     20000ull       /* a send waits this long for an answer */
#define ARP_BOOT_US     100000ull      /* at boot, for the host's MAC */
#define TX_WAIT_US      5000ull        /* for a free transmit descriptor */
#define ADDR_POLL_US    1000ull
#define BOOT_BUDGET     16
#define MULTICAST_FIRST 0xE0000000u    /* 224.0.0.0: multicast and reserved above */

static struct nic pci_nics[NET_NIC_MAX];
static struct nic *nics[NET_NIC_MAX];
static unsigned nnics;
static struct nic *nic;                 /* the one in use, or NULL */
static bool off;
static uint32_t to_ip = IPV4_BROADCAST;
static uint16_t to_port = NETPROTO_PORT;
static struct ipconf conf;
static struct arp_cache arp;
static uint64_t arp_asked_tsc;
static bool link;
static uint16_t ip_id;
static uint8_t tx[NIC_FRAME_MAX], rx[NIC_FRAME_MAX];
static void (*receiver)(uint32_t ip, uint16_t port, const uint8_t *p, unsigned len);
static uint64_t send_failures, datagrams_sent, frames_received;
static char mac_text[13];
static volatile uint32_t owner = NO_OWNER;
/* News for net_report(), written under the lock, read without it. */
static volatile bool link_news;
static volatile uint32_t said_changes, said_refusals;

bool net_add_nic(struct nic *n)
{
    if (nnics == NET_NIC_MAX)
        return false;
    nics[nnics++] = n;
    return true;
}

bool net_active(void) { return nic != NULL; }
const char *net_mac_text(void) { return mac_text; }
bool net_to_unicast(void) { return to_ip != IPV4_BROADCAST; }
void net_counts(struct net_counts *c)
{
    *c = (struct net_counts){ datagrams_sent, send_failures, frames_received,
                              nic ? nic->rx_errors : 0, nic ? nic->tx_full : 0 };
}

void net_set_receiver(void (*fn)(uint32_t, uint16_t, const uint8_t *, unsigned))
{
    receiver = fn;
}

bool net_take(uint64_t wait_us, bool steal)
{
    uint32_t me = this_cpu_index();
    struct deadline end = deadline_in_us(wait_us);
    for (;;) {
        uint32_t cur = NO_OWNER;
        if (__atomic_compare_exchange_n(&owner, &cur, me, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return true;
        if (deadline_passed(end)) {
            if (!steal)
                return false;
            /* A fault's dump: the holder is stopped (this very CPU, that
             * faulted inside the stack, or a hung one). Take it over. */
            __atomic_store_n(&owner, me, __ATOMIC_SEQ_CST);
            return true;
        }
        cpu_relax();
    }
}

void net_give(void)
{
    if (__atomic_load_n(&owner, __ATOMIC_RELAXED) == this_cpu_index())
        __atomic_store_n(&owner, NO_OWNER, __ATOMIC_RELEASE);
}

bool net_held_here(void)
{
    return __atomic_load_n(&owner, __ATOMIC_RELAXED) == this_cpu_index();
}

static uint64_t now_us(void) { return tsc_to_us(rdtsc()); }

bool net_ready(void) { return nic && link && conf.ip; }
bool net_up(void) { return net_ready(); }
bool net_link_now(void) { return nic && link; }

static bool in_subnet(uint32_t ip)
{
    return conf.mask && (ip & conf.mask) == (conf.ip & conf.mask);
}

static bool is_broadcast(uint32_t ip)
{
    return ip == IPV4_BROADCAST || (conf.mask && in_subnet(ip) && (ip | conf.mask) == 0xFFFFFFFFu);
}

static bool transmit(unsigned len)
{
    struct deadline end = deadline_in_us(TX_WAIT_US);
    while (!nic->ops->send(nic, tx, len))
        if (deadline_passed(end))
            return false;
        else
            cpu_relax();
    return true;
}

static void arp_send(uint16_t op, const uint8_t *dst_mac, uint32_t dst_ip)
{
    struct arp_msg m = { op, { 0 }, conf.ip, { 0 }, dst_ip };
    memcpy(m.sha, nic->mac, ETH_ALEN);
    if (op == ARP_OP_REPLY)
        memcpy(m.tha, dst_mac, ETH_ALEN);
    eth_put(tx, op == ARP_OP_REPLY ? dst_mac : eth_broadcast, nic->mac, ETH_TYPE_ARP);
    unsigned len = ETH_HDR_LEN + arp_put(tx + ETH_HDR_LEN, &m);
    transmit(len);
}

/* The MAC of the next hop towards ip, asking (and waiting up to wait_us,
 * receiving meanwhile) when it is not known. NULL: no answer. */
static const uint8_t *next_hop(uint32_t ip, uint64_t wait_us)
{
    if (is_broadcast(ip))
        return eth_broadcast;
    uint32_t hop = !in_subnet(ip) && conf.gw ? conf.gw : ip;
    const uint8_t *mac = arp_cache_find(&arp, hop);
    if (mac)
        return mac;
    arp_cache_want(&arp, hop);
    if (rdtsc() - arp_asked_tsc >= tsc_from_us(ARP_RETRY_US) || !arp_asked_tsc) {
        arp_asked_tsc = rdtsc();
        arp_send(ARP_OP_REQUEST, NULL, hop);
    }
    struct deadline end = deadline_in_us(wait_us);
    while (!(mac = arp_cache_find(&arp, hop)) && !deadline_passed(end))
        net_poll_locked(BOOT_BUDGET);
    return mac;
}

/* tx[ETH+IP+UDP ..] holds len payload bytes: add the headers and send. */
static bool send_udp(const uint8_t *dst_mac, uint32_t src, uint32_t dst, uint16_t sport,
                     uint16_t dport, unsigned len)
{
    uint8_t *ip = tx + ETH_HDR_LEN, *udp = ip + IPV4_HDR_LEN;
    udp_put(udp, src, dst, sport, dport, len);
    ipv4_put(ip, src, dst, IPV4_PROTO_UDP, ip_id++, UDP_HDR_LEN + len);
    eth_put(tx, dst_mac, nic->mac, ETH_TYPE_IPV4);
    return transmit(ETH_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN + len);
}

#define PAYLOAD (tx + ETH_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN)
_Static_assert(ETH_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN + NET_PAYLOAD_MAX <= NIC_FRAME_MAX,
               "a datagram fits one frame");
_Static_assert(ETH_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN + DHCP_MSG_MAX <= NIC_FRAME_MAX,
               "a DHCP message fits one frame");

static bool send_to(uint32_t ip, uint16_t port, const void *payload, unsigned len)
{
    const uint8_t *mac = NULL;
    if (len <= NET_PAYLOAD_MAX && net_ready())
        mac = next_hop(ip, ARP_WAIT_US);
    if (!mac || (memcpy(PAYLOAD, payload, len),
                 !send_udp(mac, conf.ip, ip, NETPROTO_PORT, port, len))) {
        send_failures++;
        return false;
    }
    datagrams_sent++;
    return true;
}

bool net_send_host(const void *payload, unsigned len)
{
    return send_to(to_ip, to_port, payload, len);
}

bool net_send_to(uint32_t ip, uint16_t port, const void *payload, unsigned len)
{
    if (!ip || is_broadcast(ip) || ip >= MULTICAST_FIRST || !port)
        return false;                   /* a forged source: never make it a broadcast */
    return send_to(ip, port, payload, len);
}

static void dhcp_out(unsigned len)
{
    if (len)
        send_udp(eth_broadcast, 0, IPV4_BROADCAST, DHCP_CLIENT_PORT, DHCP_SERVER_PORT, len);
}

static void on_arp(const struct eth_view *e)
{
    struct arp_msg m;
    if (!arp_parse(e->payload, e->len, &m))
        return;
    arp_cache_learn(&arp, m.spa, m.sha);   /* only answers to our questions stick */
    if (m.op == ARP_OP_REQUEST && conf.ip && m.tpa == conf.ip && !(m.sha[0] & 1))
        arp_send(ARP_OP_REPLY, m.sha, m.spa);
}

static void on_udp(const struct ipv4_view *ip)
{
    struct udp_view u;
    if (!udp_parse(ip, &u))
        return;
    if (u.dport == DHCP_CLIENT_PORT && u.sport == DHCP_SERVER_PORT) {
        struct dhcp_msg m;
        if (dhcp_parse(u.payload, u.len, conf.xid, nic->mac, &m))
            dhcp_out(ipconf_step(&conf, now_us(), &m, PAYLOAD));
        return;
    }
    bool to_me = conf.ip && (ip->dst == conf.ip || is_broadcast(ip->dst));
    if (u.dport == NETPROTO_PORT && to_me && receiver)
        receiver(ip->src, u.sport, u.payload, u.len);
}

static void on_frame(unsigned len)
{
    struct eth_view e;
    struct ipv4_view ip;
    if (!eth_parse(rx, len, &e))
        return;
    if (e.type == ETH_TYPE_ARP)
        on_arp(&e);
    else if (e.type == ETH_TYPE_IPV4 && ipv4_parse(e.payload, e.len, &ip))
        on_udp(&ip);
}

void net_poll_locked(unsigned budget)
{
    if (!nic)
        return;
    bool up = nic->ops->link_up(nic);
    if (up != link) {
        link = up;
        link_news = true;
        ipconf_link(&conf, up, now_us());
    }
    for (unsigned i = 0; i < budget; i++) {
        unsigned len = nic->ops->recv(nic, rx, sizeof rx);
        if (!len)
            break;
        frames_received++;
        on_frame(len);
    }
    if (link)
        dhcp_out(ipconf_step(&conf, now_us(), NULL, PAYLOAD));
}

void net_report(void)
{
    if (!nic)
        return;
    if (link_news) {
        link_news = false;
        kprintf("net: %s %s: link %s\n", nic->model, nic->where, link ? "up" : "down");
    }
    uint32_t refusals = conf.refusals;
    if (refusals != said_refusals) {
        said_refusals = refusals;
        char ip[16], server[16];
        ipv4_format(conf.refused_ip, ip);
        ipv4_format(conf.refused_server, server);
        kprintf("net: DHCP server %s offered %s: refused (%s; as net.ip= would); still "
                "asking\n",
                server, ip, ipconf_unusable(conf.refused_ip, conf.refused_mask));
    }
    uint32_t changes = conf.changes;
    if (changes != said_changes) {
        said_changes = changes;
        char ip[16], gw[16];
        ipv4_format(conf.ip, ip);
        ipv4_format(conf.gw, gw);
        kprintf("net: address %s (%s)%s%s\n", ip,
                conf.state == IPCONF_STATIC ? "net.ip=" : conf.fallback ? "link-local: no DHCP answer yet"
                                                                        : "DHCP",
                conf.gw ? ", gateway " : "", conf.gw ? gw : "");
    }
}

/* The first NIC with link by the deadline, else the first. */
static struct nic *choose(struct deadline end)
{
    do {
        for (unsigned i = 0; i < nnics; i++)
            if (nics[i]->ops->link_up(nics[i]))
                return nics[i];
        tsc_delay_us(ADDR_POLL_US);
    } while (!deadline_passed(end));
    kprintf("net: no link yet on %s %s (after %u ms; a link that comes up later is used "
            "then)\n",
            nics[0]->model, nics[0]->where, (unsigned)(NET_BOOT_WAIT_US / 1000));
    return nics[0];
}

void net_init(const struct boot_config *cfg)
{
    if (cfg->net_off) {
        off = true;
        kprintf("net: off (net=off): no network controller touched\n");
        return;
    }
    unsigned pci = nicpci_probe(pci_nics, NET_NIC_MAX - nnics);
    for (unsigned i = 0; i < pci; i++)
        net_add_nic(&pci_nics[i]);
    if (!nnics) {
        kprintf("net: no network controller that a driver here takes\n");
        return;
    }
    if (cfg->net_to_ip) {
        to_ip = cfg->net_to_ip;
        to_port = cfg->net_to_port ? cfg->net_to_port : NETPROTO_PORT;
    }
    struct deadline end = deadline_in_us(NET_BOOT_WAIT_US);
    struct nic *n = choose(end);
    ksnprintf(mac_text, sizeof mac_text, "%02x%02x%02x%02x%02x%02x", n->mac[0], n->mac[1],
              n->mac[2], n->mac[3], n->mac[4], n->mac[5]);
    uint32_t xid = (uint32_t)(n->mac[2] << 24 | n->mac[3] << 16 | n->mac[4] << 8 | n->mac[5]) ^
                   (uint32_t)rdtsc();
    ipconf_start(&conf, n->mac, xid, cfg->net_ip, cfg->net_mask, now_us());
    net_take(0, false);
    nic = n;
    do {                                    /* an address, if it comes soon */
        net_poll_locked(BOOT_BUDGET);
        if (!link)
            break;
        tsc_delay_us(ADDR_POLL_US);
    } while (!conf.ip && !deadline_passed(end));
    if (net_ready() && !is_broadcast(to_ip))
        next_hop(to_ip, ARP_BOOT_US);       /* the host's MAC, before anything is sent */
    net_give();
    link_news = false;
    net_report();
}

void net_ready_fields(char *buf, unsigned cap)
{
    char ip[16];
    if (nic && link && conf.ip)
        ipv4_format(conf.ip, ip);
    else
        ksnprintf(ip, sizeof ip, "%s", !nic ? "none" : link ? "pending"
                                                            : "nolink");
    if (nic)
        ksnprintf(buf, cap, "net=%s:%s ip=%s", nic->model, nic->where, ip);
    else
        ksnprintf(buf, cap, "net=%s ip=none", off ? "off" : "none");
}
