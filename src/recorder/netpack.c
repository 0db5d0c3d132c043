/* netpack.c — dump lines into datagrams, status datagrams, the host's
 * requests (netpack.h). */
#include "recorder/netpack.h"
#include "lib/format.h"
#include "lib/kstring.h"
#include "net/netauth.h"
#include "net/netcon.h"

#define SEND_POLL_EVERY 16               /* datagrams between two receive polls */
#define POLL_BUDGET     64
#define HEADER_MAX      (64 + NETAUTH_SEAL_MAX)

void netpack_start(struct netpack *p, uint64_t nonce, uint32_t dump_no)
{
    p->nonce = nonce, p->dump_no = dump_no;
    p->next = 0, p->len = p->head = 0, p->since_poll = 0;
}

void netpack_flush(struct netpack *p)
{
    if (p->len > p->head)
        netcon_send(p->pkt, p->len, p->head);
    p->len = 0;
    if (++p->since_poll >= SEND_POLL_EVERY) {   /* ARP questions, early R */
        p->since_poll = 0;
        net_poll_locked(POLL_BUDGET);
    }
}

void netpack_line(struct netpack *p, uint32_t no, const char *s, size_t n)
{
    if (p->len && (no != p->next || p->len + n > NET_PAYLOAD_MAX))
        netpack_flush(p);
    if (!p->len) {
        p->head = (unsigned)ksnprintf((char *)p->pkt, HEADER_MAX, "BT1 D %s %016lX.%u %u",
                                      net_mac_text(), p->nonce, p->dump_no, no);
        p->head += netcon_seal_words((char *)p->pkt + p->head);
        p->len = p->head;
    }
    if (p->len + n > NET_PAYLOAD_MAX)
        return;                          /* longer than DUMP_LINE_MAX: never */
    memcpy(p->pkt + p->len, s, n);
    p->len += (unsigned)n;
    p->next = no + 1;
}

void netpack_status(struct netpack *p, char kind, uint32_t lines, uint64_t arg)
{
    unsigned len = (unsigned)ksnprintf((char *)p->pkt, HEADER_MAX, "BT1 %c %s %016lX.%u %u %lu",
                                       kind, net_mac_text(), p->nonce, p->dump_no, lines, arg);
    len += netcon_seal_words((char *)p->pkt + len);
    netcon_send(p->pkt, len, len);
    p->len = 0;
}

void netwant_reset(struct netwant *w)
{
    memset(w->bits, 0, (w->cover + 7) / 8);
    w->wanted = 0, w->beyond = false, w->unproven = 0;
}

/* Ask for line l again; an unsigned request's lines are charged to its budget. */
static void want_line(struct netwant *w, uint32_t l, bool proven)
{
    if (!(w->bits[l / 8] & 1u << (l % 8))) {
        w->bits[l / 8] |= (uint8_t)(1u << (l % 8));
        w->wanted++;
        w->unproven += !proven;
    }
}

bool netwant_request(struct netwant *w, const struct netmsg *m, uint32_t lines)
{
    if (!m->tagged && w->unproven >= (uint64_t)NETPACK_UNPROVEN_RESENDS * (lines ? lines : 1))
        return false;
    for (unsigned i = 0; i < m->nranges; i++)
        for (uint64_t l = m->range[i].first; l <= m->range[i].last && l < lines; l++) {
            if (l >= w->cover) {
                w->unproven += !m->tagged && !w->beyond ? lines - w->cover : 0;
                w->beyond = true;
                break;
            }
            want_line(w, (uint32_t)l, m->tagged);
        }
    return true;
}

bool netwant_take(struct netwant *w, uint32_t l)
{
    if (l >= w->cover)
        return w->beyond;
    if (!((w->bits[l / 8] >> (l % 8)) & 1))
        return false;
    w->bits[l / 8] &= (uint8_t)~(1u << (l % 8));
    return true;
}
