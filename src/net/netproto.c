/* netproto.c — parse the host's datagrams (netproto.h). */
#include "net/netproto.h"

#define SESSION_ALPHABET "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
#define NONCE_DIGITS     16             /* a nonce's, and a tag's */
_Static_assert(NONCE_DIGITS == NETPROTO_TAG_DIGITS, "a tag is read as a nonce is");

struct cursor {
    const uint8_t *p;
    unsigned at, len;
};

static bool lit(struct cursor *c, const char *s)
{
    unsigned at = c->at;
    for (; *s; s++, at++)
        if (at >= c->len || c->p[at] != (uint8_t)*s)
            return false;
    c->at = at;
    return true;
}

static bool number(struct cursor *c, uint32_t *out)
{
    uint64_t v = 0;
    unsigned digits = 0;
    while (c->at < c->len && c->p[c->at] >= '0' && c->p[c->at] <= '9') {
        v = v * 10 + (c->p[c->at++] - '0');
        if (++digits > 10 || v > NETPROTO_LINE_MAX)
            return false;
    }
    *out = (uint32_t)v;
    return digits > 0;
}

/* 16 hex digits, their letters in one case only (from 'A' or 'a'). */
static bool hex64(struct cursor *c, char a, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < NONCE_DIGITS; i++, c->at++) {
        if (c->at >= c->len)
            return false;
        uint8_t ch = c->p[c->at];
        unsigned d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= a && ch <= a + 5 ? ch - a + 10
                                                                                : 16;
        if (d > 15)
            return false;
        v = v << 4 | d;
    }
    *out = v;
    return true;
}

/* "<16 upper-case hex>.<decimal>" */
static bool dump_id(struct cursor *c, struct netmsg *m)
{
    return hex64(c, 'A', &m->nonce) && lit(c, ".") && number(c, &m->dump);
}

/* The end of the header line: "\n", and nothing after it. */
static bool end(struct cursor *c)
{
    return lit(c, "\n") && c->at == c->len;
}

static bool ranges(struct cursor *c, struct netmsg *m)
{
    m->nranges = 0;
    do {
        if (m->nranges == NETPROTO_RANGES_MAX)
            return false;
        uint32_t a, b;
        if (!number(c, &a))
            return false;
        b = a;
        if (lit(c, "-") && (!number(c, &b) || b < a))
            return false;
        m->range[m->nranges].first = a;
        m->range[m->nranges].last = b;
        m->nranges++;
    } while (lit(c, ","));
    return end(c);
}

/* "<16 lower-case hex> ": a host datagram's tag (net/netauth.h). */
static bool tag(struct cursor *c, struct netmsg *m)
{
    return hex64(c, 'a', &m->tag) && lit(c, " ");
}

/* The signed part runs from here to the end, less a final "\n". */
static void signed_from(struct cursor *c, struct netmsg *m, bool line_end)
{
    m->signed_tail = c->p + c->at;
    m->signed_len = c->len - c->at;
    if (line_end && m->signed_len)
        m->signed_len--;
}

static bool key_bytes(struct cursor *c, struct netmsg *m)
{
    m->keys = c->p + c->at;
    m->nkeys = c->len - c->at;
    return m->nkeys >= 1 && m->nkeys <= NETPROTO_KEYS_MAX;
}

/* The old unsigned form, "BT1 K <session> <keys>": parsed to be refused. */
static bool keys_plain(struct cursor *c, struct netmsg *m)
{
    for (unsigned i = 0; i < NETPROTO_SESSION_LEN; i++, c->at++) {
        if (c->at >= c->len)
            return false;
        uint8_t ch = c->p[c->at];
        bool ok = false;
        for (const char *a = SESSION_ALPHABET; *a; a++)
            ok |= ch == (uint8_t)*a;
        if (!ok)
            return false;
    }
    m->kind = NETMSG_KEYS_PLAIN;
    return lit(c, " ") && key_bytes(c, m);
}

/* "<tag> <counter> <keys>", or the old form. */
static bool parse_keys(struct cursor *c, struct netmsg *m)
{
    unsigned at = c->at;
    if (!tag(c, m)) {
        c->at = at;
        return keys_plain(c, m);
    }
    m->kind = NETMSG_KEYS;
    signed_from(c, m, false);
    uint64_t v = 0;
    unsigned digits = 0;
    while (c->at < c->len && c->p[c->at] >= '0' && c->p[c->at] <= '9') {
        v = v * 10 + (c->p[c->at++] - '0');
        if (++digits > NETPROTO_COUNTER_DIGITS)
            return false;
    }
    m->counter = v;
    return digits && lit(c, " ") && key_bytes(c, m);
}

/* "<tag> <id>\n", or the old form "<id>\n". */
static bool parse_done(struct cursor *c, struct netmsg *m)
{
    unsigned at = c->at;
    m->kind = NETMSG_DONE;
    if (!tag(c, m)) {
        c->at = at;
        m->kind = NETMSG_DONE_PLAIN;
    }
    signed_from(c, m, true);
    return dump_id(c, m) && end(c);
}

bool netproto_parse(const uint8_t *p, unsigned len, struct netmsg *m)
{
    struct cursor c = { p, 0, len };
    if (!lit(&c, "BT1 ") || c.at >= len)
        return false;
    uint8_t kind = p[c.at++];
    if (kind == 'H' || kind == 'Q') {
        m->kind = kind == 'H' ? NETMSG_HELLO : NETMSG_WHO;
        return end(&c);
    }
    if (!lit(&c, " "))
        return false;
    if (kind == 'K')
        return parse_keys(&c, m);
    if (kind == 'A')
        return parse_done(&c, m);
    if (kind == 'R') {
        m->kind = NETMSG_RESEND;
        return dump_id(&c, m) && lit(&c, " ") && ranges(&c, m);
    }
    return false;
}

void netproto_session(uint64_t random, char out[NETPROTO_SESSION_LEN + 1])
{
    for (unsigned i = 0; i < NETPROTO_SESSION_LEN; i++) {
        out[i] = SESSION_ALPHABET[random & 31];
        random >>= 5;
    }
    out[NETPROTO_SESSION_LEN] = 0;
}
