/* netcon.c — console lines out, keys in (netcon.h). */
#include "net/netcon.h"
#include "arch/cpu.h"
#include "console/status.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "net/ipv4.h"
#include "net/net.h"
#include "net/netauth.h"
#include "time/tsc.h"

#define KEY_QUEUE           64               /* a power of two */
#define LINE_WAIT_US        20000ull         /* a console line waits this long for the stack */
#define POLL_BUDGET         32
#define HEADER_MAX          48
#define BACKLOG             16384
#define REFUSED_SAY_US      1000000ull       /* refusals are said at most this often */
#define SECOND_US           1000000ull
#define KEY_TRIES_PER_S     20              /* key datagrams looked at per second from one address */
#define KEY_TRIES_ALL_PER_S 200         /* ... and from all of them together */
#define KEY_SOURCES         8                /* addresses with a budget of their own */
#define ANNOUNCE_US         5000000ull       /* "BT1 I" this often while idle */
#define WHO_ANSWER_US       1000000ull       /* answers to "BT1 Q" at most this often, in all */
#define READY_MAX           320
#define ANNOUNCE_HEADER_MAX 64          /* "BT1 I <mac> <nonce> <seq>\n" */
_Static_assert(ANNOUNCE_HEADER_MAX + READY_MAX <= NET_PAYLOAD_MAX, "an announcement fits");

static char session[NETPROTO_SESSION_LEN + 1];
static uint64_t nonce;                  /* the boot's, as D datagrams write it */
static bool keys_off, host_seen, started;
static bool withhold;                   /* the line being printed is not for the network */
static uint8_t keyq[KEY_QUEUE];
static unsigned key_head, key_tail;     /* under the net lock */
static uint32_t seq;
/* Refusals, counted under the net lock and said from netcon_getc. */
struct refusals {
    uint64_t count, said;
    uint32_t from;                      /* the last sender */
    uint64_t said_tsc;
};
static struct refusals keys_refused, done_refused;
static uint64_t last_counter;           /* the last K counter taken */
/* Each sender's key budget: KEY_TRIES_PER_S a second; the one heard from
 * longest ago gives its place to a new address. */
struct budget {
    uint32_t ip;
    unsigned tries;
    uint64_t since_tsc, last_tsc;
};
static struct budget budgets[KEY_SOURCES];
static struct budget all_budget;
/* The announcement: the READY line, sent as "BT1 I" while idle and to whoever asks. */
static char ready_line[READY_MAX];
static unsigned ready_len;
static uint32_t announce_seq;
static uint64_t announce_tsc, who_tsc;
static bool announced, who_pending;
static uint32_t who_ip;
static uint16_t who_port;
static void (*dump_handler)(const struct netmsg *m);
static uint8_t out[NET_PAYLOAD_MAX];
/* Console text from before the network was up (no link or address yet),
 * sent when it is; beyond BACKLOG bytes, counted instead. */
static char backlog[BACKLOG];
static unsigned backlog_len;
static uint64_t backlog_cut;

void netcon_set_dump_handler(void (*fn)(const struct netmsg *m)) { dump_handler = fn; }
bool netcon_host_seen(void) { return host_seen; }

/* One more datagram in b's current second; false past limit. */
static bool spend(struct budget *b, uint64_t now, unsigned limit)
{
    if (now - b->since_tsc >= tsc_from_us(SECOND_US))
        b->since_tsc = now, b->tries = 0;
    b->last_tsc = now;
    return ++b->tries <= limit;
}

/* A key datagram from ip may be looked at: its sender's budget, then everyone's. */
static bool budget_take(uint32_t ip, uint64_t now)
{
    struct budget *b = &budgets[0];
    for (unsigned i = 0; i < KEY_SOURCES; i++) {
        if (budgets[i].ip == ip && budgets[i].last_tsc) {
            b = &budgets[i];
            break;
        }
        if (budgets[i].last_tsc < b->last_tsc)
            b = &budgets[i];
    }
    if (b->ip != ip || !b->last_tsc)
        *b = (struct budget){ ip, 0, now, now };
    return spend(b, now, KEY_TRIES_PER_S) && spend(&all_budget, now, KEY_TRIES_ALL_PER_S);
}

static void refuse(struct refusals *r, uint32_t ip)
{
    r->count++;
    r->from = ip;
}

/* A signed K with a counter above the last: its keys to the queue. A
 * guesser gets KEY_TRIES_PER_S tries a second per address and
 * KEY_TRIES_ALL_PER_S from all together: months for 2^30 codes online
 * (offline, from one captured tag, far less: docs/network-protocol.md), while
 * the host with the code gets every key through from its own address. */
static void take_keys(uint32_t ip, const struct netmsg *m)
{
    if (keys_off || m->kind != NETMSG_KEYS || !budget_take(ip, rdtsc()) ||
        !netauth_valid(session, net_mac_text(), nonce, m) || m->counter <= last_counter) {
        refuse(&keys_refused, ip);
        return;
    }
    last_counter = m->counter;
    for (unsigned i = 0; i < m->nkeys && key_tail - key_head < KEY_QUEUE; i++)
        keyq[key_tail++ % KEY_QUEUE] = m->keys[i];
}

/* Under the net lock, from net_poll_locked: never prints. */
static void receive(uint32_t ip, uint16_t port, const uint8_t *p, unsigned len)
{
    struct netmsg m;
    if (!netproto_parse(p, len, &m))
        return;
    switch (m.kind) {
    case NETMSG_KEYS:
    case NETMSG_KEYS_PLAIN:
        take_keys(ip, &m);
        return;
    case NETMSG_DONE_PLAIN:
        refuse(&done_refused, ip);
        return;
    case NETMSG_DONE:
        if (!netauth_valid(session, net_mac_text(), nonce, &m)) {
            refuse(&done_refused, ip);
            return;
        }
        break;
    case NETMSG_WHO:
        if (!who_pending)
            who_pending = true, who_ip = ip, who_port = port;
        break;
    default:
        break;
    }
    host_seen = true;
    if (dump_handler && (m.kind == NETMSG_DONE || m.kind == NETMSG_RESEND))
        dump_handler(&m);
}

/* Bytes as "BT1 T" datagrams, cut to fit; with the lock held and the
 * network up. */
static void send_text(const char *s, unsigned long n)
{
    while (n) {
        unsigned h = (unsigned)ksnprintf((char *)out, HEADER_MAX, "BT1 T %s %u\n",
                                         net_mac_text(), seq++);
        unsigned take = n < NET_PAYLOAD_MAX - h ? (unsigned)n : NET_PAYLOAD_MAX - h;
        memcpy(out + h, s, take);
        net_send_host(out, h + take);   /* a failure is counted there */
        s += take, n -= take;
    }
}

/* With the lock held: the backlog out, once the network is up. */
void netcon_send_backlog(void)
{
    if (!backlog_len || !net_ready())
        return;
    send_text(backlog, backlog_len);
    backlog_len = 0;
    if (backlog_cut) {
        char line[112];
        int n = ksnprintf(line, sizeof line, "net: %lu bytes of console text from before the "
                                             "network was up were not kept\n",
                          backlog_cut);
        send_text(line, (unsigned long)n);
        backlog_cut = 0;
    }
}

/* The sink: console bytes to the host, or into the backlog. */
static void sink(const char *s, unsigned long n)
{
    if (withhold)
        return;                         /* the session code line, broadcast: not sent */
    if (!net_take(LINE_WAIT_US, false))
        return;                         /* the stack is busy elsewhere: the line is lost */
    if (net_ready()) {
        netcon_send_backlog();
        send_text(s, n);
    } else {
        unsigned long room = BACKLOG - backlog_len, take = n < room ? n : room;
        memcpy(backlog + backlog_len, s, take);
        backlog_len += (unsigned)take;
        backlog_cut += n - take;
    }
    net_give();
}

void netcon_init(const struct boot_config *cfg, uint64_t random, uint64_t boot_nonce)
{
    if (!net_active())
        return;
    netproto_session(random, session);
    nonce = boot_nonce;
    keys_off = cfg->net_keys_off;
    net_set_receiver(receive);
    /* The code on the screen and serial console; over the network only to
     * a host net.to names. */
    char line[160];
    int len = ksnprintf(line, sizeof line, "net: session code %s (keys from the host need it: "
                                           "scripts/capture --net --session %s)%s\n",
                        session, session,
                        keys_off ? "; remote keys are off (net.keys=off)" : "");
    /* The sink first: it gets the boot's text so far (CONSOLE_REPLAY),
     * then the code line, which goes over the network only to one host. */
    started = console_add_sink(sink, NULL, CONSOLE_REPLAY);   /* dumps: recorder/dumpnet.c */
    withhold = !net_to_unicast();
    console_lock();
    console_write_locked(line, (unsigned long)len);
    console_unlock();
    withhold = false;
    char words[32];
    ksnprintf(words, sizeof words, "net session %s", session);
    status_set_note(words);                 /* and on the screen's status row, to stay */
    if (!started)
        kprintf("net: no console sink left for the network (%u taken)\n", CONSOLE_SINKS_MAX);
}

void netcon_print_stats(void)
{
    if (!net_active())
        return;
    struct net_counts c;
    char where[64];
    net_counts(&c);
    net_ready_fields(where, sizeof where);
    kprintf("stats: %s: datagrams sent %lu, not sent %lu; frames received %lu, receive errors "
            "%lu; transmit ring full %lu; key datagrams refused %lu; confirmations refused "
            "%lu\n",
            where, c.sent, c.not_sent, c.received, c.rx_errors, c.tx_full,
            keys_refused.count, done_refused.count);
}

/* "BT1 I": the READY line, to ip:port (0: to net.to). With the lock held. */
static bool announce(uint32_t ip, uint16_t port)
{
    unsigned h = (unsigned)ksnprintf((char *)out, ANNOUNCE_HEADER_MAX, "BT1 I %s %016lX %u\n",
                                     net_mac_text(), nonce, announce_seq);
    memcpy(out + h, ready_line, ready_len);
    bool sent = ip ? net_send_to(ip, port, out, h + ready_len) : net_send_host(out, h + ready_len);
    announce_seq += sent;
    return sent;
}

/* With the lock held, idle (no dump in progress): the announcement every
 * ANNOUNCE_US (the first as soon as the network is up), the answer to Q. */
static void announce_poll(void)
{
    if (!__atomic_load_n(&ready_len, __ATOMIC_ACQUIRE) || dump_handler || !net_ready())
        return;
    uint64_t now = rdtsc();
    if (who_pending && (!who_tsc || now - who_tsc >= tsc_from_us(WHO_ANSWER_US))) {
        who_pending = false;
        who_tsc = now;
        announce(who_ip, who_port);
    }
    if (!announced || now - announce_tsc >= tsc_from_us(ANNOUNCE_US)) {
        announced = true;
        announce_tsc = now;
        announce(0, 0);
    }
}

void netcon_set_ready(const char *line)
{
    if (!net_active())
        return;
    unsigned n = (unsigned)strlen(line);
    if (n + 1 > READY_MAX - 1)
        n = READY_MAX - 2;
    memcpy(ready_line, line, n);
    ready_line[n] = '\n';
    __atomic_store_n(&ready_len, n + 1, __ATOMIC_RELEASE);   /* the line, then its length */
    if (net_take(LINE_WAIT_US, false)) {  /* else the next poll announces */
        announce_poll();
        net_give();
    }
}

/* Refusals said on the console, at most once a second each. */
static void say_refused(struct refusals *r, const char *what, const char *why)
{
    if (r->count == r->said || rdtsc() - r->said_tsc < tsc_from_us(REFUSED_SAY_US))
        return;
    r->said_tsc = rdtsc();
    char from[16];
    ipv4_format(r->from, from);
    kprintf("net: %lu %s refused so far (%s; the last from %s)\n", r->count, what, why, from);
    r->said = r->count;
}

int netcon_getc(void)
{
    if (!net_active() || !net_take(0, false))
        return -1;
    net_poll_locked(POLL_BUDGET);
    netcon_send_backlog();
    announce_poll();
    int c = key_head != key_tail ? keyq[key_head++ % KEY_QUEUE] : -1;
    net_give();
    net_report();
    say_refused(&keys_refused, "key datagrams",
                keys_off ? "net.keys=off" : "without this boot's session code");
    say_refused(&done_refused, "confirmations (A)", "without this boot's session code");
    return c;
}
