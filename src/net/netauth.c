/* netauth.c — a host datagram's tag (netauth.h). */
#include "net/netauth.h"
#include "lib/format.h"
#include "lib/siphash.h"

bool netauth_tag(const char session[NETPROTO_SESSION_LEN], const char *mac_text,
                 uint64_t nonce, char kind, const uint8_t *tail, unsigned len, uint64_t *tag)
{
    char msg[NETAUTH_MSG_MAX];
    int head = ksnprintf(msg, sizeof msg, "%s %016lX BT1 %c ", mac_text, nonce, kind);
    if (head < 0 || (unsigned)head + len > sizeof msg)
        return false;
    for (unsigned i = 0; i < len; i++)
        msg[head + i] = (char)tail[i];
    uint8_t key[SIPHASH_KEY_LEN] = { 0 };
    for (unsigned i = 0; i < NETPROTO_SESSION_LEN; i++)
        key[i] = (uint8_t)session[i];
    *tag = siphash24(key, msg, (unsigned)head + len);
    return true;
}

bool netauth_valid(const char session[NETPROTO_SESSION_LEN], const char *mac_text,
                   uint64_t nonce, const struct netmsg *m)
{
    char kind = m->kind == NETMSG_KEYS ? 'K' : m->kind == NETMSG_DONE ? 'A'
                                                                      : 0;
    uint64_t want;
    return kind && netauth_tag(session, mac_text, nonce, kind, m->signed_tail, m->signed_len, &want) && want == m->tag;
}
