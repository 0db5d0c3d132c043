/* test_netparse.c — the network stack's pure parts: Ethernet, ARP, IPv4,
 * UDP, DHCP, the host protocol and the address state machine; then every
 * parser fed random and mutated frames (ASan/UBSan catch a read past the
 * frame: each input lives in a buffer of exactly its length). */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "net/arp.h"
#include "net/dhcp.h"
#include "net/eth.h"
#include "net/ipconf.h"
#include "net/ipv4.h"
#include "net/netproto.h"
#include "net/udp.h"

static const uint8_t mac_a[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t mac_b[6] = { 0x52, 0x55, 0x0A, 0x00, 0x02, 0x02 };

static void test_checksum(void)
{
    /* RFC 1071's example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2. */
    const uint8_t v[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
    CHECK_EQ(ipv4_fold(ipv4_sum(v, sizeof v, 0)), (uint16_t)~0xddf2);
    /* A header from the wild (Wikipedia's IPv4 checksum example). */
    const uint8_t h[20] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                            0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7 };
    CHECK_EQ(ipv4_fold(ipv4_sum(h, 20, 0)), 0);
    uint8_t odd[3] = { 1, 2, 3 };
    CHECK_EQ(ipv4_sum(odd, 3, 0), 0x0102 + 0x0300);
    char text[16];
    ipv4_format(0x0A00020F, text);
    CHECK(!strcmp(text, "10.0.2.15"));
    ipv4_format(0xFFFFFFFF, text);
    CHECK(!strcmp(text, "255.255.255.255"));
    ipv4_format(0, text);
    CHECK(!strcmp(text, "0.0.0.0"));
}

/* A whole UDP frame into f; returns its length. */
static unsigned udp_frame(uint8_t *f, const char *payload, unsigned n)
{
    eth_put(f, mac_a, mac_b, ETH_TYPE_IPV4);
    memcpy(f + 42, payload, n);
    udp_put(f + 34, 0x0A000202, 0x0A00020F, 40000, NETPROTO_PORT, n);
    ipv4_put(f + 14, 0x0A000202, 0x0A00020F, IPV4_PROTO_UDP, 7, UDP_HDR_LEN + n);
    return 42 + n;
}

static void test_udp_roundtrip(void)
{
    uint8_t f[1514];
    unsigned len = udp_frame(f, "BT1 H\n", 6);
    struct eth_view e;
    struct ipv4_view ip;
    struct udp_view u;
    CHECK(eth_parse(f, len, &e));
    CHECK_EQ(e.type, ETH_TYPE_IPV4);
    CHECK(!memcmp(e.dst, mac_a, 6) && !memcmp(e.src, mac_b, 6));
    CHECK(ipv4_parse(e.payload, e.len, &ip));
    CHECK_EQ(ip.src, 0x0A000202);
    CHECK_EQ(ip.dst, 0x0A00020F);
    CHECK(udp_parse(&ip, &u));
    CHECK_EQ(u.sport, 40000);
    CHECK_EQ(u.dport, NETPROTO_PORT);
    CHECK_EQ(u.len, 6);
    CHECK(!memcmp(u.payload, "BT1 H\n", 6));
    /* Padding after the datagram (short frames) is ignored. */
    CHECK(ipv4_parse(e.payload, e.len + 10, &ip) && ip.len == 14);
    /* A flipped payload bit fails the UDP checksum; 0 means "none". */
    f[44] ^= 1;
    CHECK(ipv4_parse(e.payload, e.len, &ip) && !udp_parse(&ip, &u));
    f[40] = f[41] = 0;
    CHECK(udp_parse(&ip, &u));
    /* Length fields that lie. */
    len = udp_frame(f, "xyz", 3);
    f[38] = 0, f[39] = 200;                      /* UDP length past the IP payload */
    CHECK(ipv4_parse(f + 14, len - 14, &ip) && !udp_parse(&ip, &u));
    f[38] = 0, f[39] = 7;                        /* shorter than its header */
    CHECK(!udp_parse(&ip, &u));
    len = udp_frame(f, "xyz", 3);
    CHECK(!ipv4_parse(f + 14, len - 15, &ip));   /* total length beyond the frame */
    f[14 + 6] = 0x20;                            /* MF: a fragment */
    CHECK(!ipv4_parse(f + 14, len - 14, &ip));
    len = udp_frame(f, "xyz", 3);
    f[14] = 0x44;                                /* IHL 4 */
    CHECK(!ipv4_parse(f + 14, len - 14, &ip));
    len = udp_frame(f, "xyz", 3);
    f[14 + 12] ^= 0x80;                          /* header checksum now wrong */
    CHECK(!ipv4_parse(f + 14, len - 14, &ip));
    CHECK(!eth_parse(f, 13, &e));
    f[12] = 0x05, f[13] = 0xDC;                  /* an 802.3 length, not a type */
    CHECK(!eth_parse(f, 60, &e));
    CHECK(eth_is_broadcast(eth_broadcast) && !eth_is_broadcast(mac_a));
}

static void test_arp(void)
{
    struct arp_msg m = { ARP_OP_REQUEST, { 0 }, 0x0A00020F, { 0 }, 0x0A000202 };
    memcpy(m.sha, mac_a, 6);
    uint8_t p[ARP_LEN];
    CHECK_EQ(arp_put(p, &m), ARP_LEN);
    struct arp_msg r;
    CHECK(arp_parse(p, ARP_LEN, &r));
    CHECK_EQ(r.op, ARP_OP_REQUEST);
    CHECK_EQ(r.spa, 0x0A00020F);
    CHECK_EQ(r.tpa, 0x0A000202);
    CHECK(!memcmp(r.sha, mac_a, 6));
    CHECK(!arp_parse(p, ARP_LEN - 1, &r));
    p[7] = 3;                                    /* RARP op */
    CHECK(!arp_parse(p, ARP_LEN, &r));
    p[7] = 1, p[4] = 8;
    CHECK(!arp_parse(p, ARP_LEN, &r));
    /* The cache learns what it asked for only, and never a group MAC. */
    struct arp_cache c = { 0 };
    CHECK(!arp_cache_learn(&c, 0x0A000202, mac_b));
    CHECK(!arp_cache_find(&c, 0x0A000202));
    arp_cache_want(&c, 0x0A000202);
    CHECK(!arp_cache_find(&c, 0x0A000202));
    CHECK(!arp_cache_learn(&c, 0x0A000202, eth_broadcast));
    CHECK(arp_cache_learn(&c, 0x0A000202, mac_b));
    CHECK(!memcmp(arp_cache_find(&c, 0x0A000202), mac_b, 6));
    for (uint32_t ip = 1; ip <= 1000; ip++)      /* a storm of answers nobody asked for */
        CHECK(!arp_cache_learn(&c, 0xC0A80000 + ip, mac_a));
    CHECK(!memcmp(arp_cache_find(&c, 0x0A000202), mac_b, 6));
    arp_cache_want(&c, 0x0A000202);              /* asking again keeps the answer */
    CHECK(arp_cache_find(&c, 0x0A000202));
}

/* A server's reply, built by hand as a DHCP server would. */
static unsigned dhcp_reply(uint8_t *p, uint8_t type, uint32_t xid, uint32_t yi)
{
    memset(p, 0, 300);
    p[0] = 2, p[1] = 1, p[2] = 6;
    p[4] = (uint8_t)(xid >> 24), p[5] = (uint8_t)(xid >> 16), p[6] = (uint8_t)(xid >> 8),
    p[7] = (uint8_t)xid;
    p[16] = (uint8_t)(yi >> 24), p[17] = (uint8_t)(yi >> 16), p[18] = (uint8_t)(yi >> 8),
    p[19] = (uint8_t)yi;
    memcpy(p + 28, mac_a, 6);
    p[236] = 0x63, p[237] = 0x82, p[238] = 0x53, p[239] = 0x63;
    uint8_t opts[] = { 53, 1, type, 0, 54, 4, 10, 0, 2, 2, 1, 4, 255, 255, 255, 0,
                       3, 8, 10, 0, 2, 2, 10, 0, 2, 3, 51, 4, 0, 1, 0x51, 0x80, 255 };
    memcpy(p + 240, opts, sizeof opts);
    return 240 + sizeof opts;
}

static void test_dhcp(void)
{
    uint8_t p[DHCP_MSG_MAX];
    CHECK_EQ(dhcp_put(p, DHCP_DISCOVER, 0x11223344, mac_a, 0, 0), DHCP_MSG_MAX);
    CHECK_EQ(p[0], 1);
    CHECK_EQ(p[240], 53);
    CHECK_EQ(p[242], DHCP_DISCOVER);
    dhcp_put(p, DHCP_REQUEST, 0x11223344, mac_a, 0x0A00020F, 0x0A000202);
    CHECK_EQ(p[243], 50);                        /* requested address */
    CHECK_EQ(p[249], 54);                        /* server identifier */
    uint8_t r[400];
    unsigned n = dhcp_reply(r, DHCP_OFFER, 0x11223344, 0x0A00020F);
    struct dhcp_msg m;
    CHECK(dhcp_parse(r, n, 0x11223344, mac_a, &m));
    CHECK_EQ(m.type, DHCP_OFFER);
    CHECK_EQ(m.yiaddr, 0x0A00020F);
    CHECK_EQ(m.server, 0x0A000202);
    CHECK_EQ(m.mask, 0xFFFFFF00);
    CHECK_EQ(m.router, 0x0A000202);
    CHECK_EQ(m.lease_s, 86400);
    CHECK(!dhcp_parse(r, n, 0x11223345, mac_a, &m));    /* another client's xid */
    CHECK(!dhcp_parse(r, n, 0x11223344, mac_b, &m));    /* another client's MAC */
    CHECK(!dhcp_parse(r, 239, 0x11223344, mac_a, &m));
    r[241] = 200;                                /* an option running past the end */
    CHECK(!dhcp_parse(r, n, 0x11223344, mac_a, &m));
}

static void test_ipconf(void)
{
    struct ipconf c;
    uint8_t out[DHCP_MSG_MAX], r[400];
    ipconf_start(&c, mac_a, 100, 0, 0, 0);
    CHECK_EQ(ipconf_step(&c, 0, NULL, out), 0);  /* no link: nothing */
    ipconf_link(&c, true, 1000);
    CHECK_EQ(ipconf_step(&c, 1000, NULL, out), DHCP_MSG_MAX);
    CHECK_EQ(out[242], DHCP_DISCOVER);
    CHECK_EQ(ipconf_step(&c, 2000, NULL, out), 0);      /* not yet time to retry */
    struct dhcp_msg m;
    unsigned n = dhcp_reply(r, DHCP_OFFER, c.xid, 0x0A00020F);
    CHECK(dhcp_parse(r, n, c.xid, mac_a, &m));
    CHECK_EQ(ipconf_step(&c, 3000, &m, out), DHCP_MSG_MAX);
    CHECK_EQ(out[242], DHCP_REQUEST);
    n = dhcp_reply(r, DHCP_ACK, c.xid, 0x0A00020F);
    CHECK(dhcp_parse(r, n, c.xid, mac_a, &m));
    ipconf_step(&c, 4000, &m, out);
    CHECK_EQ(c.state, IPCONF_BOUND);
    CHECK_EQ(c.ip, 0x0A00020F);
    CHECK_EQ(c.gw, 0x0A000202);
    CHECK_EQ(c.changes, 1);
    /* Renewal at T1 (half the lease): a REQUEST; nobody answers: kept. */
    uint64_t t1 = 4000 + 43200ull * 1000000;
    CHECK_EQ(ipconf_step(&c, t1, NULL, out), 0);
    CHECK_EQ(c.state, IPCONF_REQUESTING);
    unsigned sent = 0;
    for (uint64_t t = t1; t < t1 + 60000000ull && c.state == IPCONF_REQUESTING; t += 100000)
        sent += ipconf_step(&c, t, NULL, out) != 0;
    CHECK(sent >= 1);
    CHECK_EQ(c.state, IPCONF_BOUND);
    CHECK_EQ(c.ip, 0x0A00020F);
    /* No server at all: link-local after the fallback time, DISCOVERs go on. */
    ipconf_start(&c, mac_a, 5, 0, 0, 0);
    ipconf_link(&c, true, 0);
    unsigned discovers = 0;
    for (uint64_t t = 0; t <= IPCONF_FALLBACK_US + 5000000; t += 10000)
        discovers += ipconf_step(&c, t, NULL, out) != 0;
    CHECK(discovers >= 3);
    CHECK(c.fallback);
    CHECK_EQ(c.ip >> 16, IPCONF_LINKLOCAL >> 16);
    CHECK_EQ(c.ip & 0xFF, 0x56);
    /* An answer later replaces the link-local address. */
    n = dhcp_reply(r, DHCP_OFFER, c.xid, 0x0A00020F);
    CHECK(dhcp_parse(r, n, c.xid, mac_a, &m));
    ipconf_step(&c, 9000000, &m, out);
    n = dhcp_reply(r, DHCP_ACK, c.xid, 0x0A00020F);
    CHECK(dhcp_parse(r, n, c.xid, mac_a, &m));
    ipconf_step(&c, 9000001, &m, out);
    CHECK_EQ(c.ip, 0x0A00020F);
    CHECK(!c.fallback);
    /* Offers and acks of an address no host may have: refused, counted,
     * still selecting; a good offer afterwards is taken. */
    static const uint32_t unusable[] = { 0xFFFFFFFFu, 0, 0x0A0002FFu, 0xE0000001u, 0x7F000001u };
    ipconf_start(&c, mac_a, 7, 0, 0, 0);
    ipconf_link(&c, true, 0);
    ipconf_step(&c, 0, NULL, out);
    for (unsigned i = 0; i < sizeof unusable / sizeof unusable[0]; i++) {
        n = dhcp_reply(r, DHCP_OFFER, c.xid, unusable[i]);
        CHECK(dhcp_parse(r, n, c.xid, mac_a, &m));
        ipconf_step(&c, 1000 + i, &m, out);
        CHECK_EQ(c.state, IPCONF_SELECTING);
        CHECK_EQ(c.refusals, i + 1);
        CHECK_EQ(c.refused_ip, unusable[i]);
        CHECK_EQ(c.refused_server, 0x0A000202);
        CHECK(ipconf_unusable(c.refused_ip, c.refused_mask) != NULL);
    }
    CHECK_EQ(c.ip, 0);
    n = dhcp_reply(r, DHCP_OFFER, c.xid, 0x0A00020F);
    CHECK(dhcp_parse(r, n, c.xid, mac_a, &m));
    ipconf_step(&c, 2000, &m, out);
    CHECK_EQ(c.state, IPCONF_REQUESTING);
    n = dhcp_reply(r, DHCP_ACK, c.xid, 0x0A0002FFu);      /* an ack of another, bad one */
    CHECK(dhcp_parse(r, n, c.xid, mac_a, &m));
    ipconf_step(&c, 2001, &m, out);
    CHECK_EQ(c.state, IPCONF_REQUESTING);
    CHECK_EQ(c.ip, 0);
    CHECK(ipconf_unusable(0x0A0002FE, 0xFFFFFF00u) == NULL);
    CHECK(ipconf_unusable(0x0A0002FF, 0xFFFF0000u) == NULL);  /* 10.0.2.255 in a /16 */
    /* A fixed address: never DHCP, link or not. */
    ipconf_start(&c, mac_a, 5, 0xC0A80114, 0xFFFF0000, 0);
    ipconf_link(&c, true, 0);
    CHECK_EQ(ipconf_step(&c, 10000000, NULL, out), 0);
    CHECK_EQ(c.ip, 0xC0A80114);
    CHECK_EQ(c.state, IPCONF_STATIC);
}

static int parse_text(const char *s, struct netmsg *m)
{
    return netproto_parse((const uint8_t *)s, (unsigned)strlen(s), m);
}

static void test_netproto(void)
{
    struct netmsg m;
    CHECK(parse_text("BT1 H\n", &m) && m.kind == NETMSG_HELLO);
    CHECK(parse_text("BT1 Q\n", &m) && m.kind == NETMSG_WHO);
    CHECK(parse_text("BT1 K ABCD23 dq", &m) && m.kind == NETMSG_KEYS_PLAIN);
    CHECK(m.nkeys == 2 && m.keys[0] == 'd');
    CHECK(parse_text("BT1 K 0123456789abcdef 42 dq", &m) && m.kind == NETMSG_KEYS);
    CHECK(m.tag == 0x0123456789abcdefull && m.counter == 42 && m.nkeys == 2 && m.keys[1] == 'q');
    CHECK(m.signed_len == 5 && !memcmp(m.signed_tail, "42 dq", 5));
    CHECK(parse_text("BT1 A 0123456789ABCDEF.3\n", &m) && m.kind == NETMSG_DONE_PLAIN);
    CHECK(m.nonce == 0x0123456789ABCDEFull && m.dump == 3);
    CHECK(parse_text("BT1 A fedcba9876543210 0123456789ABCDEF.3\n", &m) && m.kind == NETMSG_DONE);
    CHECK(m.tag == 0xfedcba9876543210ull && m.nonce == 0x0123456789ABCDEFull && m.dump == 3);
    CHECK(m.signed_len == 18 && !memcmp(m.signed_tail, "0123456789ABCDEF.3", 18));
    CHECK(parse_text("BT1 R 0123456789ABCDEF.12 3-9,12,4000000000\n", &m));
    CHECK(m.kind == NETMSG_RESEND && m.dump == 12 && m.nranges == 3);
    CHECK(m.range[0].first == 3 && m.range[0].last == 9);
    CHECK(m.range[1].first == 12 && m.range[1].last == 12);
    CHECK(m.range[2].first == 4000000000u);
    /* clang-format off */
    static const char *const bad[] = {
        "", "BT1", "BT1 ", "BT1 H", "BT1 H\nx", "BT2 H\n", "bt1 H\n", "BT1 Z\n",
        "BT1 K ABCD23 ", "BT1 K ABCD2 d", "BT1 K abcd23 d", "BT1 K ABCD10 d", "BT1 KABCD23 d",
        "BT1 A 0123456789ABCDEF.3", "BT1 A 0123456789abcdef.3\n", "BT1 A 0123456789ABCDE.3\n",
        "BT1 A 0123456789ABCDEF.\n", "BT1 A 0123456789ABCDEF3\n", "BT1 A 0123456789ABCDEF.3 \n",
        "BT1 R 0123456789ABCDEF.1 \n", "BT1 R 0123456789ABCDEF.1 9-3\n",
        "BT1 R 0123456789ABCDEF.1 1,\n", "BT1 R 0123456789ABCDEF.1 1--2\n",
        "BT1 R 0123456789ABCDEF.1 99999999999\n", "BT1 R 0123456789ABCDEF.1 4294967295\n",
        "BT1 R 0123456789ABCDEF.1 -3\n", "BT1 Q", "BT1 Q \n", "BT1 Q\nx",
        "BT1 K 0123456789abcdef 42 ", "BT1 K 0123456789abcdef 42", "BT1 K 0123456789abcdef  d",
        "BT1 K 0123456789ABCDEF 42 d", "BT1 K 0123456789abcde 42 d", "BT1 K 0123456789abcdef x d",
        "BT1 K 0123456789abcdef 12345678901234567890 d", "BT1 K 0123456789abcdef42 d",
        "BT1 A 0123456789abcdef 0123456789ABCDEF.3", "BT1 A 0123456789abcdef  0123456789ABCDEF.3\n",
        "BT1 A 0123456789abcdeg 0123456789ABCDEF.3\n", "BT1 A 0123456789abcdef\n",
    };
    /* clang-format on */
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(!parse_text(bad[i], &m));
        if (parse_text(bad[i], &m))
            fprintf(stderr, "  took \"%s\"\n", bad[i]);
    }
    char keys[80] = "BT1 K ABCD23 ";
    memset(keys + 13, 'd', 64);
    CHECK(parse_text(keys, &m) && m.nkeys == 64);
    keys[13 + 64] = 'd';
    CHECK(!parse_text(keys, &m));                /* more keys than one datagram takes */
    char many[600] = "BT1 R 0123456789ABCDEF.1 ";
    for (int i = 0; i < 65; i++)
        sprintf(many + strlen(many), "%s%d", i ? "," : "", i * 2);
    strcat(many, "\n");
    CHECK(!parse_text(many, &m));                /* 65 ranges: one too many */
    char code[NETPROTO_SESSION_LEN + 1], code2[NETPROTO_SESSION_LEN + 1];
    netproto_session(0x123456789ull, code);
    netproto_session(0x123456788ull, code2);
    CHECK_EQ(strlen(code), NETPROTO_SESSION_LEN);
    CHECK(strcmp(code, code2));
    char k[32];
    snprintf(k, sizeof k, "BT1 K %s d", code);
    CHECK(parse_text(k, &m) && m.kind == NETMSG_KEYS_PLAIN);  /* the old form: refused later */
    char signedk[120] = "BT1 K 0123456789abcdef 1234567890123456789 ";
    memset(signedk + strlen(signedk), 'd', 64);
    CHECK(parse_text(signedk, &m) && m.nkeys == 64 && m.counter == 1234567890123456789ull);
    strcat(signedk, "d");
    CHECK(!parse_text(signedk, &m));             /* 65 keys */
}

/* Every parser on one input, held in a buffer of exactly its length. */
static void parse_all(const uint8_t *in, unsigned len)
{
    uint8_t *f = malloc(len ? len : 1);
    memcpy(f, in, len);
    struct eth_view e;
    struct ipv4_view ip;
    struct udp_view u;
    struct arp_msg a;
    struct dhcp_msg d;
    struct netmsg m;
    if (eth_parse(f, len, &e)) {
        arp_parse(e.payload, e.len, &a);
        if (ipv4_parse(e.payload, e.len, &ip) && udp_parse(&ip, &u)) {
            CHECK(u.payload + u.len <= f + len);
            dhcp_parse(u.payload, u.len, 0x11223344, mac_a, &d);
            netproto_parse(u.payload, u.len, &m);
        }
    }
    ipv4_parse(f, len, &ip);
    dhcp_parse(f, len, 0x11223344, mac_a, &d);
    if (netproto_parse(f, len, &m) && (m.kind == NETMSG_KEYS || m.kind == NETMSG_KEYS_PLAIN))
        CHECK(m.keys + m.nkeys <= f + len);
    if (netproto_parse(f, len, &m) && (m.kind == NETMSG_KEYS || m.kind == NETMSG_DONE))
        CHECK(m.signed_tail >= f && m.signed_tail + m.signed_len <= f + len);
    free(f);
}

static uint32_t rnd_state = 12345;
static uint32_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 17;
    rnd_state ^= rnd_state << 5;
    return rnd_state;
}

static void test_fuzz(void)
{
    uint8_t f[1514], g[1514];
    for (int i = 0; i < 20000; i++) {          /* random bytes, random lengths */
        unsigned len = rnd() % sizeof f;
        for (unsigned j = 0; j < len; j++)
            f[j] = (uint8_t)rnd();
        parse_all(f, len);
    }
    const char *seeds[] = { "BT1 R 0123456789ABCDEF.12 3-9,12\n", "BT1 K ABCD23 dq",
                            "BT1 A 0123456789ABCDEF.3\n", "BT1 H\n",
                            "BT1 K 0123456789abcdef 42 dq", "BT1 A 0123456789abcdef 0123456789ABCDEF.3\n",
                            "BT1 Q\n" };
    uint8_t dh[400];
    unsigned dlen = dhcp_reply(dh, DHCP_ACK, 0x11223344, 0x0A00020F);
    for (int i = 0; i < 40000; i++) {          /* valid frames, mutated and cut */
        unsigned len;
        if (i % 3 == 2) {
            eth_put(f, mac_a, mac_b, ETH_TYPE_IPV4);
            memcpy(f + 42, dh, dlen);
            udp_put(f + 34, 0x0A000202, 0xFFFFFFFF, 67, 68, dlen);
            ipv4_put(f + 14, 0x0A000202, 0xFFFFFFFF, IPV4_PROTO_UDP, 1, UDP_HDR_LEN + dlen);
            len = 42 + dlen;
        } else {
            const char *s = seeds[rnd() % (sizeof seeds / sizeof seeds[0])];
            len = udp_frame(f, s, (unsigned)strlen(s));
        }
        memcpy(g, f, len);
        unsigned flips = 1 + rnd() % 4;
        for (unsigned k = 0; k < flips; k++)
            g[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
        parse_all(g, rnd() % 4 ? len : rnd() % (len + 1));
        parse_all(f, rnd() % (len + 1));       /* the valid frame, truncated */
    }
}

int main(void)
{
    test_checksum();
    test_udp_roundtrip();
    test_arp();
    test_dhcp();
    test_ipconf();
    test_netproto();
    test_fuzz();
    return check_summary("test_netparse");
}
