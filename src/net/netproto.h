/* netproto.h — the datagrams between a machine and the host's
 * `scripts/capture --net` (docs/network-protocol.md).
 *
 * Every datagram is ASCII: a header line "BT1 <kind> ..." ending in
 * "\n", then (for some kinds) a body. Machine to host (to net.to, from
 * UDP port NETPROTO_PORT; I also to whoever asked with Q), each header
 * ending in " <counter> <tag>" (the seal, net/netauth.h):
 *   BT1 I <mac> <nonce> <seq> ..\n<the READY line>\n  here I am (idle, every 5 s;
 *                                      every 1 s at first until a host answers)
 *   BT1 T <mac> <seq> <nonce> ..\n<console text>
 *   BT1 D <mac> <nonce>.<dump> <first line no> ..\n<dump lines, each ending \n>
 *   BT1 W <mac> <nonce>.<dump> <lines> <ms left> ..\n      sent, waiting for A
 *   BT1 X <mac> <nonce>.<dump> <lines> <unconfirmed> ..\n  stopped waiting
 * Host to machine (to the address those come from):
 *   BT1 K <tag> <counter> <key bytes>  keys, signed (net/netauth.h)
 *   BT1 A <tag> <nonce>.<dump>\n       the dump arrived whole, signed
 *   BT1 R [<tag> ]<nonce>.<dump> <ranges>\n  send these line numbers again
 *                                      ("3-9,12"); signed or not
 *   BT1 H\n                            a host listens (wait for its A after a
 *                                      dump); capture --net answers each I with it
 *   BT1 Q\n                            who is there (answered with an I)
 * <tag>: 16 lower-case hex digits. The old unsigned forms "BT1 K
 * <session> <keys>" and "BT1 A <nonce>.<dump>\n" parse as
 * NETMSG_KEYS_PLAIN and NETMSG_DONE_PLAIN, to be refused and counted.
 * Pure code, host-tested: a parser strict against any bytes. */
#ifndef NET_NETPROTO_H
#define NET_NETPROTO_H
#include <stdbool.h>
#include <stdint.h>

#define NETPROTO_PORT            6666
#define NETPROTO_SESSION_LEN     16          /* the screen's code: 80 bits */
#define NETPROTO_OLD_SESSION_LEN 6       /* the old unsigned K's code */
#define NETPROTO_KEY_LEN         16          /* a boot's key (SipHash's) */
#define NETPROTO_KEYS_MAX        64
#define NETPROTO_RANGES_MAX      64
#define NETPROTO_LINE_MAX        0xFFFFFFFEu   /* line numbers above are refused */
#define NETPROTO_TAG_DIGITS      16
#define NETPROTO_COUNTER_DIGITS  19          /* a K's counter: below 10^19, fits 64 bits */

enum netmsg_kind {
    NETMSG_KEYS,
    NETMSG_KEYS_PLAIN,
    NETMSG_RESEND,
    NETMSG_DONE,
    NETMSG_DONE_PLAIN,
    NETMSG_HELLO,
    NETMSG_WHO,
};

struct netmsg {
    enum netmsg_kind kind;
    bool tagged;                                     /* KEYS, DONE; RESEND when signed */
    uint64_t tag;
    const uint8_t *signed_tail;                      /* tagged: after "<tag> ", into */
    unsigned signed_len;                             /* the datagram, less a final "\n" */
    uint64_t counter;                                /* KEYS */
    const uint8_t *keys;                             /* KEYS (and _PLAIN): into the datagram */
    unsigned nkeys;
    uint64_t nonce;                                  /* RESEND, DONE (and _PLAIN) */
    uint32_t dump;
    unsigned nranges;                                /* RESEND */
    struct {
        uint32_t first, last;
    } range[NETPROTO_RANGES_MAX];
};

/* False for anything that is not exactly one of the host's datagrams. */
bool netproto_parse(const uint8_t *p, unsigned len, struct netmsg *m);
/* This boot's session code from 80 random bits (all of a, the low 16 of
 * b): NETPROTO_SESSION_LEN characters of an alphabet without look-alikes
 * (no 0/O, 1/I), 5 bits each. */
void netproto_session(uint64_t a, uint64_t b, char out[NETPROTO_SESSION_LEN + 1]);
/* The code as the screen shows it, in groups of four: "ABCD-EFGH-JKLM-NPQR". */
void netproto_session_grouped(const char code[NETPROTO_SESSION_LEN], char out[20]);

#endif
