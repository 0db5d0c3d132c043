/* netproto.h — the datagrams between a machine and the host's
 * `scripts/capture --net` (docs/host-tools.md, "The network protocol").
 *
 * Every datagram is ASCII: a header line "BT1 <kind> ..." ending in
 * "\n", then (for some kinds) a body. Machine to host (to net.to, from
 * UDP port NETPROTO_PORT):
 *   BT1 T <mac> <seq>\n<console text>
 *   BT1 D <mac> <nonce>.<dump> <first line no>\n<dump lines, each ending \n>
 *   BT1 W <mac> <nonce>.<dump> <lines> <ms left>\n      sent, waiting for A
 *   BT1 X <mac> <nonce>.<dump> <lines> <unconfirmed>\n  stopped waiting
 * Host to machine (to the address those come from):
 *   BT1 K <session> <key bytes>       keys (only with this boot's session code)
 *   BT1 R <nonce>.<dump> <ranges>     send these line numbers again ("3-9,12")
 *   BT1 A <nonce>.<dump>              the dump arrived whole
 *   BT1 H                             a host listens (wait for its A after a dump)
 * Pure code, host-tested: a parser strict against any bytes. */
#ifndef NET_NETPROTO_H
#define NET_NETPROTO_H
#include <stdbool.h>
#include <stdint.h>

#define NETPROTO_PORT        6666
#define NETPROTO_SESSION_LEN 6
#define NETPROTO_KEYS_MAX    64
#define NETPROTO_RANGES_MAX  64
#define NETPROTO_LINE_MAX    0xFFFFFFFEu   /* line numbers above are refused */

enum netmsg_kind { NETMSG_KEYS, NETMSG_RESEND, NETMSG_DONE, NETMSG_HELLO };

struct netmsg {
    enum netmsg_kind kind;
    char     session[NETPROTO_SESSION_LEN + 1];     /* KEYS */
    const uint8_t *keys;                             /* KEYS: into the datagram */
    unsigned nkeys;
    uint64_t nonce;                                  /* RESEND, DONE */
    uint32_t dump;
    unsigned nranges;                                /* RESEND */
    struct { uint32_t first, last; } range[NETPROTO_RANGES_MAX];
};

/* False for anything that is not exactly one of the host's datagrams. */
bool netproto_parse(const uint8_t *p, unsigned len, struct netmsg *m);
/* This boot's session code from a random 64-bit value: NETPROTO_SESSION_LEN
 * characters of an alphabet without look-alikes (no 0/O, 1/I). */
void netproto_session(uint64_t random, char out[NETPROTO_SESSION_LEN + 1]);

#endif
