/* test_siphash.c — SipHash-2-4 against the paper's vector, and the tag
 * the network protocol's signed datagrams carry (net/netauth.c). */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "lib/siphash.h"
#include "net/netauth.h"
#include "net/netproto.h"

static const uint8_t paper_key[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

static void test_paper_vector(void)
{
    uint8_t msg[64];
    for (unsigned i = 0; i < sizeof msg; i++)
        msg[i] = (uint8_t)i;
    /* Appendix A: a 15-byte message 00..0e. */
    CHECK_EQ(siphash24(paper_key, msg, 15), 0xa129ca6149be45e5ull);
    /* The reference code's vectors.h, lengths 0, 7, 8 and 63 (the tail
     * and whole-word paths). */
    CHECK_EQ(siphash24(paper_key, msg, 0), 0x726fdb47dd0e0e31ull);
    CHECK_EQ(siphash24(paper_key, msg, 7), 0xab0200f58b01d137ull);
    CHECK_EQ(siphash24(paper_key, msg, 8), 0x93f5f5799a932462ull);
    CHECK_EQ(siphash24(paper_key, msg, 63), 0x958a324ceb064572ull);
}

static int parse_text(const char *s, struct netmsg *m)
{
    return netproto_parse((const uint8_t *)s, (unsigned)strlen(s), m);
}

/* The tag is SipHash over "<mac> <nonce> <header without tag>", keyed
 * by the boot's key (here a session code's sixteen characters). */
static void test_tag(void)
{
    const char *mac = "525400123456";
    uint64_t nonce = 0x0123456789ABCDEFull;
    const uint8_t *key = (const uint8_t *)"K7QX2MABCDEFGHJK", *code = key;
    const uint8_t *other = (const uint8_t *)"K7QX2MABCDEFGHJL";
    const char *a_msg = "525400123456 0123456789ABCDEF BT1 A 0123456789ABCDEF.3";
    uint64_t want = siphash24(key, a_msg, strlen(a_msg));
    char dgram[96];
    snprintf(dgram, sizeof dgram, "BT1 A %016llx 0123456789ABCDEF.3\n", (unsigned long long)want);
    struct netmsg m;
    CHECK(parse_text(dgram, &m) && m.kind == NETMSG_DONE && m.dump == 3 && m.tag == want);
    CHECK(netauth_valid(code, mac, nonce, &m));
    CHECK(!netauth_valid(other, mac, nonce, &m));          /* another code */
    CHECK(!netauth_valid(code, "525400123457", nonce, &m));   /* another machine */
    CHECK(!netauth_valid(code, mac, nonce + 1, &m));          /* another boot */
    dgram[strlen(dgram) - 2] = '4';                            /* another dump */
    CHECK(parse_text(dgram, &m) && !netauth_valid(code, mac, nonce, &m));

    const char *k_msg = "525400123456 0123456789ABCDEF BT1 K 17 ds";
    want = siphash24(key, k_msg, strlen(k_msg));
    snprintf(dgram, sizeof dgram, "BT1 K %016llx 17 ds", (unsigned long long)want);
    CHECK(parse_text(dgram, &m) && m.kind == NETMSG_KEYS && m.counter == 17 && m.nkeys == 2);
    CHECK(netauth_valid(code, mac, nonce, &m));
    dgram[strlen(dgram) - 1] = 'x';                            /* other keys */
    CHECK(parse_text(dgram, &m) && !netauth_valid(code, mac, nonce, &m));

    char k[200] = "BT1 K 0000000000000000 9999999999999999999 ";  /* the longest K */
    memset(k + strlen(k), 'd', NETPROTO_KEYS_MAX);
    uint64_t t;
    CHECK(parse_text(k, &m) && m.nkeys == NETPROTO_KEYS_MAX);
    CHECK(netauth_tag(code, mac, nonce, 'K', m.signed_tail, m.signed_len, &t));
    m.tag = t;
    CHECK(netauth_valid(code, mac, nonce, &m));
    /* The unsigned old forms parse, and are never valid. */
    CHECK(parse_text("BT1 A 0123456789ABCDEF.3\n", &m) && m.kind == NETMSG_DONE_PLAIN);
    CHECK(!netauth_valid(code, mac, nonce, &m));
    CHECK(parse_text("BT1 K K7QX2M d", &m) && m.kind == NETMSG_KEYS_PLAIN);
    CHECK(!netauth_valid(code, mac, nonce, &m));
    /* A signed R: valid with the key; the unsigned form parses, untagged. */
    const char *r_msg = "525400123456 0123456789ABCDEF BT1 R 0123456789ABCDEF.3 4-9";
    want = siphash24(key, r_msg, strlen(r_msg));
    snprintf(dgram, sizeof dgram, "BT1 R %016llx 0123456789ABCDEF.3 4-9\n",
             (unsigned long long)want);
    CHECK(parse_text(dgram, &m) && m.kind == NETMSG_RESEND && m.tagged && m.nranges == 1);
    CHECK(netauth_valid(code, mac, nonce, &m) && !netauth_valid(other, mac, nonce, &m));
    CHECK(parse_text("BT1 R 0123456789ABCDEF.3 4-9\n", &m) && m.kind == NETMSG_RESEND &&
          !m.tagged && !netauth_valid(code, mac, nonce, &m));
}

/* A machine datagram's seal: the counter and tag words, the tag SipHash
 * over the datagram as sent with the tag's digits as '0'. */
static void test_seal(void)
{
    const uint8_t *key = (const uint8_t *)"K7QX2MABCDEFGHJK";
    char pkt[160];
    int h = snprintf(pkt, sizeof pkt, "BT1 W 525400123456 0123456789ABCDEF.3 120 4800");
    h += (int)netauth_seal_words(pkt + h, 41);
    CHECK(!strcmp(pkt + strlen(pkt) - 21, " 41 0000000000000000\n"));
    uint64_t want = siphash24(key, pkt, (size_t)h);
    netauth_seal(key, (uint8_t *)pkt, (unsigned)h, (unsigned)h);
    char tag[17];
    snprintf(tag, sizeof tag, "%016llx", (unsigned long long)want);
    CHECK(!memcmp(pkt + h - 17, tag, 16) && pkt[h - 1] == '\n' && pkt[h - 18] == ' ');
    /* With a body: the tag covers it too. */
    h = snprintf(pkt, sizeof pkt, "BT1 T 525400123456 7 0123456789ABCDEF");
    h += (int)netauth_seal_words(pkt + h, 0);
    strcpy(pkt + h, "hello\n");
    want = siphash24(key, pkt, (size_t)h + 6);
    netauth_seal(key, (uint8_t *)pkt, (unsigned)h + 6, (unsigned)h);
    snprintf(tag, sizeof tag, "%016llx", (unsigned long long)want);
    CHECK(!memcmp(pkt + h - 17, tag, 16));
}

int main(void)
{
    test_paper_vector();
    test_tag();
    test_seal();
    return check_summary("test_siphash");
}
