/* test_netcon.c — net/netcon.c's receive and send paths, on the host
 * (issue 33, items 4 and 5): the proven host, and the K counter's ceiling.
 *
 * netcon.c is linked as it is, with the real parser, tags and seal
 * (netproto.c, netauth.c, siphash.c); what it calls of the stack and
 * the console is faked below: the fake stack hands netcon's receiver the
 * datagrams a test queues (as net_poll_locked does) and records where
 * each datagram netcon sends goes, net.to (net_send_host) or one host
 * (net_send_to). Signed K datagrams are real: one vector's tag was
 * computed from docs/network-protocol.md's text by the host's own SipHash
 * (scripts/btlib/capture/siphash.py), the others by net/netauth.c.
 *
 * Checked: console text and a dump's datagrams go to the broadcast
 * net.to until a host proves it has the key, then to that host (its
 * address and port); a forged K, or a valid one refused for its counter,
 * moves nothing; an explicit unicast net.to is kept. A K's counter may
 * climb at most 2^53 at once: within the step taken, past it refused
 * and counted (10^19-1 cannot end the boot's keys), a replay or a lower
 * counter refused, a following legitimate K still taken. The first host
 * to speak (an H) is said once; a refused datagram does not count. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "console/status.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "net/ipv4.h"
#include "net/net.h"
#include "net/netauth.h"
#include "net/netcon.h"
#include "time/tsc.h"

#define MAC            "525400123456"
#define NONCE          0x0123456789ABCDEFull
#define LAB_KEY        "K7QX2MABCDEFGHJK"           /* net.key's 16 bytes */
#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define BROADCAST      IP(255, 255, 255, 255)
#define HOST           IP(10, 0, 2, 2)
#define HOST_PORT      40123
#define STEP           (1ull << 53)                 /* netcon.c's KEY_COUNTER_STEP, per the doc */

/* ---- the fake stack and console --------------------------------------------- */
static uint32_t net_to_ip = BROADCAST;           /* net.to */
static uint16_t net_to_port = NETPROTO_PORT;
static bool net_to_is_unicast;
static struct {
    uint32_t ip;
    uint16_t port;
    char kind;                                   /* "BT1 <kind>" */
} last_sent;
static unsigned sent_count;
static void (*receiver)(uint32_t ip, uint16_t port, const uint8_t *p, unsigned len);
static console_sink_fn sink;
static struct {
    uint32_t ip;
    uint16_t port;
    uint8_t bytes[256];
    unsigned len;
    bool pending;
} inbound;
static char said[4096];

static bool record(uint32_t ip, uint16_t port, const void *payload, unsigned len)
{
    const char *p = payload;
    CHECK(len > 6 && !memcmp(p, "BT1 ", 4));
    last_sent.ip = ip, last_sent.port = port, last_sent.kind = p[4];
    sent_count++;
    return true;
}
bool net_send_host(const void *payload, unsigned len)
{
    return record(net_to_ip, net_to_port, payload, len);
}
bool net_send_to(uint32_t ip, uint16_t port, const void *payload, unsigned len)
{
    return record(ip, port, payload, len);
}
bool net_to_unicast(void) { return net_to_is_unicast; }
bool net_active(void) { return true; }
bool net_ready(void) { return true; }
bool net_take(uint64_t wait_us, bool steal) { return (void)wait_us, (void)steal, true; }
void net_give(void) {}
void net_report(void) {}
const char *net_mac_text(void) { return MAC; }
void net_set_receiver(void (*fn)(uint32_t, uint16_t, const uint8_t *, unsigned)) { receiver = fn; }
void net_poll_locked(unsigned budget)
{
    (void)budget;
    if (inbound.pending && receiver) {
        inbound.pending = false;
        receiver(inbound.ip, inbound.port, inbound.bytes, inbound.len);
    }
}
void net_counts(struct net_counts *c) { *c = (struct net_counts){ 0 }; }
void net_ready_fields(char *buf, unsigned cap) { snprintf(buf, cap, "net=test ip=10.0.2.15"); }
bool console_add_sink(console_sink_fn write, console_present_fn present, unsigned flags)
{
    (void)present, (void)flags;
    sink = write;
    return true;
}
void console_lock(void) {}
void console_unlock(void) {}
void console_write_locked(const char *s, unsigned long n) { sink(s, n); }
void status_set_note(const char *note) { (void)note; }
uint64_t tsc_from_us(uint64_t us) { return us * 3000; }
int kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t at = strlen(said);
    int n = kvsnprintf(said + at, sizeof said - at, fmt, ap);
    va_end(ap);
    return n;
}

/* ---- helpers ------------------------------------------------------------------ */
/* A datagram from ip:port, through netcon's real receive path (its
 * netcon_getc polls the stack); the keys it queued, as a string. */
static const char *from(uint32_t ip, uint16_t port, const char *dgram)
{
    static char keys[NETPROTO_KEYS_MAX + 1];
    inbound.ip = ip, inbound.port = port, inbound.len = (unsigned)strlen(dgram);
    memcpy(inbound.bytes, dgram, inbound.len);
    inbound.pending = true;
    unsigned n = 0;
    for (int c; n < NETPROTO_KEYS_MAX && (c = netcon_getc()) >= 0;)
        keys[n++] = (char)c;
    keys[n] = 0;
    CHECK(!inbound.pending);
    return keys;
}

/* "BT1 K <tag> <counter> <keys>", the tag by net/netauth.c under key. */
static const char *signed_k(const char *key, uint64_t counter, const char *keys)
{
    static char dgram[128];
    char tail[64];
    int n = snprintf(tail, sizeof tail, "%llu %s", (unsigned long long)counter, keys);
    uint64_t tag = 0;
    CHECK(netauth_tag((const uint8_t *)key, MAC, NONCE, 'K', (const uint8_t *)tail,
                      (unsigned)n, &tag));
    snprintf(dgram, sizeof dgram, "BT1 K %016llx %s", (unsigned long long)tag, tail);
    return dgram;
}

/* The count of K datagrams refused, from the `s` line netcon prints. */
static unsigned long keys_refused(void)
{
    said[0] = 0;
    netcon_print_stats();
    const char *at = strstr(said, "key datagrams refused ");
    CHECK(at != NULL);
    return at ? strtoul(at + strlen("key datagrams refused "), NULL, 10) : ~0ul;
}

/* Console text, then a dump's datagram (recorder/dumpnet.c sends its own
 * through netcon_send): both must go to ip:port. */
static bool both_go_to(uint32_t ip, uint16_t port)
{
    bool ok = true;
    unsigned before = sent_count;
    sink("a console line\n", 15);
    ok &= sent_count == before + 1 && last_sent.kind == 'T' && last_sent.ip == ip &&
          last_sent.port == port;
    char pkt[128];
    int h = snprintf(pkt, sizeof pkt, "BT1 W %s %016llX.1 10 4800", MAC, (unsigned long long)NONCE);
    h += (int)netcon_seal_words(pkt + h);
    ok &= netcon_send((uint8_t *)pkt, (unsigned)h, (unsigned)h);
    ok &= sent_count == before + 2 && last_sent.kind == 'W' && last_sent.ip == ip &&
          last_sent.port == port;
    return ok;
}

/* ---- the tests ---------------------------------------------------------------- */
/* The first host that speaks the protocol is said once on the console
 * (a dump waits for its confirmation from then on); a refused datagram
 * (an unsigned A) is not a host speaking. */
static void test_host_heard(void)
{
    said[0] = 0;
    from(IP(10, 0, 2, 9), 5555, "BT1 A 0123456789ABCDEF.1\n");
    CHECK(!netcon_host_seen());
    CHECK(strstr(said, "a host answers") == NULL);
    from(HOST, HOST_PORT, "BT1 H\n");
    CHECK(netcon_host_seen());
    CHECK(strstr(said, "net: a host answers from 10.0.2.2:40123: dumps wait for its "
                       "confirmation\n") != NULL);
    said[0] = 0;
    from(IP(10, 0, 2, 9), 5555, "BT1 H\n");
    CHECK(strstr(said, "a host answers") == NULL);            /* once */
}

/* Item 4: the proven host. The first K is the independent vector: its
 * message "525400123456 0123456789ABCDEF BT1 K 1 ds" (the doc's signed
 * message) tagged by scripts/btlib/capture/siphash.py under LAB_KEY. */
static void test_proven_host(void)
{
    CHECK(both_go_to(BROADCAST, NETPROTO_PORT));            /* no host has proved itself yet */
    /* A forged K (wrong tag) from another host: refused, nothing moves. */
    CHECK(!strcmp(from(IP(10, 0, 2, 9), 5555, "BT1 K cd9d4391a165f5e9 1 ds"), ""));
    CHECK_EQ(keys_refused(), 1);
    CHECK(both_go_to(BROADCAST, NETPROTO_PORT));
    /* An unsigned old-form K: the same. */
    CHECK(!strcmp(from(IP(10, 0, 2, 9), 5555, "BT1 K K7QX2M ds"), ""));
    CHECK_EQ(keys_refused(), 2);
    CHECK(both_go_to(BROADCAST, NETPROTO_PORT));

    /* The host's K, signed: taken, and the host is proven. */
    CHECK(!strcmp(from(HOST, HOST_PORT, "BT1 K cd9d4391a165f5e8 1 ds"), "ds"));
    CHECK_EQ(keys_refused(), 2);
    CHECK(both_go_to(HOST, HOST_PORT));
    /* A forged K from another address, with a fresh counter: stays. */
    CHECK(!strcmp(from(IP(10, 0, 2, 3), 7777, signed_k("K7QX2MABCDEFGHJL", 2, "x")), ""));
    CHECK_EQ(keys_refused(), 3);
    CHECK(both_go_to(HOST, HOST_PORT));
    /* A valid K refused for its counter (a replay of the first, from
     * elsewhere): the proof needs the counter too. */
    CHECK(!strcmp(from(IP(10, 0, 2, 3), 7777, "BT1 K cd9d4391a165f5e8 1 ds"), ""));
    CHECK_EQ(keys_refused(), 4);
    CHECK(both_go_to(HOST, HOST_PORT));
    /* The same host from another port (a restarted capture): followed. */
    CHECK(!strcmp(from(HOST, HOST_PORT + 1, signed_k(LAB_KEY, 2, "s")), "s"));
    CHECK(both_go_to(HOST, HOST_PORT + 1));

    /* An explicit unicast net.to is the user's: kept, proven host or not. */
    net_to_is_unicast = true, net_to_ip = IP(10, 0, 2, 100), net_to_port = 6000;
    CHECK(both_go_to(IP(10, 0, 2, 100), 6000));
    CHECK(!strcmp(from(HOST, HOST_PORT, signed_k(LAB_KEY, 3, "d")), "d"));
    CHECK(both_go_to(IP(10, 0, 2, 100), 6000));
    net_to_is_unicast = false, net_to_ip = BROADCAST, net_to_port = NETPROTO_PORT;
    CHECK(both_go_to(HOST, HOST_PORT));
}

/* Item 5: the counter's ceiling (the last counter taken is 3 here). */
static void test_counter_ceiling(void)
{
    unsigned long refused = keys_refused();
    uint64_t c = 3 + STEP;                                  /* exactly one step up: taken */
    CHECK(!strcmp(from(HOST, HOST_PORT, signed_k(LAB_KEY, c, "a")), "a"));
    CHECK_EQ(keys_refused(), refused);
    /* One past the step: refused and counted, from the proven host or not. */
    CHECK(!strcmp(from(HOST, HOST_PORT, signed_k(LAB_KEY, c + STEP + 1, "b")), ""));
    CHECK_EQ(keys_refused(), ++refused);
    CHECK(!strcmp(from(IP(10, 0, 2, 5), 99, signed_k(LAB_KEY, c + STEP + 1, "b")), ""));
    CHECK_EQ(keys_refused(), ++refused);
    CHECK(both_go_to(HOST, HOST_PORT));                     /* a refused K proves nothing */
    /* The counter's top, 10^19-1 (19 digits): refused, so it cannot end the boot's keys. */
    CHECK(!strcmp(from(HOST, HOST_PORT, signed_k(LAB_KEY, 9999999999999999999ull, "q")), ""));
    CHECK_EQ(keys_refused(), ++refused);
    /* A following legitimate K, within the step: still taken. */
    CHECK(!strcmp(from(HOST, HOST_PORT, signed_k(LAB_KEY, c + STEP, "ok")), "ok"));
    CHECK_EQ(keys_refused(), refused);
    /* A replay of it, and a lower counter: refused and counted. */
    CHECK(!strcmp(from(HOST, HOST_PORT, signed_k(LAB_KEY, c + STEP, "ok")), ""));
    CHECK_EQ(keys_refused(), ++refused);
    CHECK(!strcmp(from(HOST, HOST_PORT, signed_k(LAB_KEY, c + 1, "z")), ""));
    CHECK_EQ(keys_refused(), ++refused);
    /* And the next one up is taken. */
    CHECK(!strcmp(from(HOST, HOST_PORT, signed_k(LAB_KEY, c + STEP + 1, "y")), "y"));
    CHECK_EQ(keys_refused(), refused);
}

int main(void)
{
    struct boot_config cfg = { 0 };
    cfg.net_key_set = true;
    memcpy(cfg.net_key, LAB_KEY, NETPROTO_KEY_LEN);
    said[0] = 0;
    netcon_init(&cfg, 1, 2, NONCE);
    CHECK(sink != NULL && receiver != NULL);
    CHECK_EQ(sent_count, 0);                                /* the key line is never sent */
    test_host_heard();
    test_proven_host();
    test_counter_ceiling();
    return check_summary("test_netcon");
}
