/* netauth.h — the proofs the datagrams carry, both ways
 * (docs/network-protocol.md, "Signed datagrams" and "Sealed datagrams").
 *
 * A boot has one 16-byte key: net.key's when the command line gives one,
 * else the sixteen ASCII characters of the session code the screen shows.
 *
 * Host to machine (A, K, a signed R): tag = SipHash-2-4 (lib/siphash.h)
 * under the key, over
 *   "<mac> <nonce> BT1 <kind> <the rest of the header after the tag>"
 * (<mac> and <nonce> exactly as this machine writes them; the rest
 * without its final "\n").
 * Machine to host (I, T, D, W, X): each header ends in " <counter> <tag>",
 * the counter counting this boot's sealed datagrams; the tag is SipHash-2-4
 * under the key over the whole datagram as sent, with the tag's 16 digits
 * written as '0'. Tags are 16 lower-case hex digits, most significant
 * first. The key itself never goes on the wire. Pure code, host-tested. */
#ifndef NET_NETAUTH_H
#define NET_NETAUTH_H
#include <stdbool.h>
#include <stdint.h>
#include "net/netproto.h"

#define NETAUTH_MSG_MAX  192     /* the longest signed message (a K with 64 keys) fits */
#define NETAUTH_SEAL_MAX 40     /* " <counter> <tag>\n" at most */

/* The tag of a host message of kind ('A', 'K', 'R') whose text after the
 * tag is tail[0..len); false when it would not fit NETAUTH_MSG_MAX. */
bool netauth_tag(const uint8_t key[NETPROTO_KEY_LEN], const char *mac_text, uint64_t nonce,
                 char kind, const uint8_t *tail, unsigned len, uint64_t *tag);
/* A parsed, tagged KEYS, DONE or RESEND datagram carries the right tag. */
bool netauth_valid(const uint8_t key[NETPROTO_KEY_LEN], const char *mac_text, uint64_t nonce,
                   const struct netmsg *m);
/* The seal's words, " <counter> 0000000000000000\n", at out (room for
 * NETAUTH_SEAL_MAX); returns their length. */
unsigned netauth_seal_words(char *out, uint64_t counter);
/* Seal a datagram of len bytes whose header ends at head (just past the
 * seal words' "\n"): its tag written over the zeros. */
void netauth_seal(const uint8_t key[NETPROTO_KEY_LEN], uint8_t *pkt, unsigned len,
                  unsigned head);

#endif
