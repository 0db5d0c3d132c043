/* netauth.c — the datagrams' tags (netauth.h). */
#include "net/netauth.h"
#include "lib/format.h"
#include "lib/siphash.h"

#define TAG_DIGITS 16
_Static_assert(NETPROTO_KEY_LEN == SIPHASH_KEY_LEN, "a boot's key is SipHash's");

bool netauth_tag(const uint8_t key[NETPROTO_KEY_LEN], const char *mac_text, uint64_t nonce,
                 char kind, const uint8_t *tail, unsigned len, uint64_t *tag)
{
    char msg[NETAUTH_MSG_MAX];
    int head = ksnprintf(msg, sizeof msg, "%s %016lX BT1 %c ", mac_text, nonce, kind);
    if (head < 0 || (unsigned)head + len > sizeof msg)
        return false;
    for (unsigned i = 0; i < len; i++)
        msg[head + i] = (char)tail[i];
    *tag = siphash24(key, msg, (unsigned)head + len);
    return true;
}

bool netauth_valid(const uint8_t key[NETPROTO_KEY_LEN], const char *mac_text, uint64_t nonce,
                   const struct netmsg *m)
{
    char kind = m->kind == NETMSG_KEYS ? 'K' : m->kind == NETMSG_DONE ? 'A'
                                           : m->kind == NETMSG_RESEND ? 'R'
                                                                      : 0;
    uint64_t want;
    return kind && m->tagged && netauth_tag(key, mac_text, nonce, kind, m->signed_tail, m->signed_len, &want) && want == m->tag;
}

unsigned netauth_seal_words(char *out, uint64_t counter)
{
    return (unsigned)ksnprintf(out, NETAUTH_SEAL_MAX, " %lu 0000000000000000\n", counter);
}

void netauth_seal(const uint8_t key[NETPROTO_KEY_LEN], uint8_t *pkt, unsigned len,
                  unsigned head)
{
    uint64_t tag = siphash24(key, pkt, len);
    uint8_t *at = pkt + head - 1 - TAG_DIGITS;
    for (int i = TAG_DIGITS - 1; i >= 0; i--, tag >>= 4)
        at[i] = (uint8_t)"0123456789abcdef"[tag & 15];
}
