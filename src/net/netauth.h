/* netauth.h — the proof a host datagram carries that its sender knows
 * this boot's session code (docs/network-protocol.md, "Signed datagrams").
 *
 * tag = SipHash-2-4 (lib/siphash.h) keyed by the six characters of the
 * session code followed by ten zero bytes, over
 *   "<mac> <nonce> BT1 <kind> <the rest of the header after the tag>"
 * (<mac> and <nonce> exactly as this machine writes them in its D
 * datagrams; the rest without its final "\n"), written as 16 lower-case
 * hex digits, the most significant first. So A and K bind this machine,
 * this boot and their own words; the code itself never goes on the wire.
 * Pure code, host-tested. */
#ifndef NET_NETAUTH_H
#define NET_NETAUTH_H
#include <stdbool.h>
#include <stdint.h>
#include "net/netproto.h"

#define NETAUTH_MSG_MAX 192     /* the longest signed message (a K with 64 keys) fits */

/* The tag of a message of kind ('A', 'K') whose text after the tag is
 * tail[0..len); false when it would not fit NETAUTH_MSG_MAX. */
bool netauth_tag(const char session[NETPROTO_SESSION_LEN], const char *mac_text,
                 uint64_t nonce, char kind, const uint8_t *tail, unsigned len, uint64_t *tag);
/* A parsed KEYS or DONE datagram carries the right tag. */
bool netauth_valid(const char session[NETPROTO_SESSION_LEN], const char *mac_text,
                   uint64_t nonce, const struct netmsg *m);

#endif
