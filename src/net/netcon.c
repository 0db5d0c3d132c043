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
#define HEADER_MAX          (48 + NETAUTH_SEAL_MAX)
#define BACKLOG             16384
#define REFUSED_SAY_US      1000000ull       /* refusals are said at most this often */
#define KEY_COUNTER_STEP    (1ull << 53)   /* a K's counter climbs at most this much at once */
#define ANNOUNCE_US         5000000ull       /* "BT1 I" this often while idle */
#define ANNOUNCE_UNHEARD_US 1000000ull       /* ... this often at first, while no host answered */
#define ANNOUNCE_UNHEARD    30               /* ... for at most this many announcements */
#define WHO_ANSWER_US       1000000ull       /* answers to "BT1 Q" at most this often, in all */
#define READY_MAX           320
#define ANNOUNCE_HEADER_MAX (64 + NETAUTH_SEAL_MAX)   /* "BT1 I <mac> <nonce> <seq> <seal>" */
_Static_assert(ANNOUNCE_HEADER_MAX + READY_MAX <= NET_PAYLOAD_MAX, "an announcement fits");

static char session[NETPROTO_SESSION_LEN + 1];
static uint8_t key[NETPROTO_KEY_LEN];   /* net.key's, else the session code's characters */
static bool lab_key;                    /* net.key gave it */
static uint64_t nonce;                  /* the boot's, as D datagrams write it */
static uint64_t sealed;                 /* datagrams sealed so far: the next one's counter */
static bool keys_off, host_seen, started;
static uint32_t heard_ip;               /* the first host that spoke the protocol */
static uint16_t heard_port;
static bool heard_said;
static uint32_t proven_ip;              /* the last host that proved it has the key */
static uint16_t proven_port;
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
/* The announcement: the READY line, sent as "BT1 I" while idle and to whoever asks. */
static char ready_line[READY_MAX];
static unsigned ready_len;
static uint32_t announce_seq;
static uint64_t announce_tsc, who_tsc;
static bool announced, who_pending;
static uint32_t who_ip;
static uint16_t who_port;
static void (*dump_handler)(const struct netmsg *m);
static void (*stream_handler)(const struct netmsg *m);
static uint8_t out[NET_PAYLOAD_MAX];
/* Console text from before the network was up (no link or address yet),
 * sent when it is; beyond BACKLOG bytes, counted instead. */
static char backlog[BACKLOG];
static unsigned backlog_len;
static uint64_t backlog_cut;

void netcon_set_dump_handler(void (*fn)(const struct netmsg *m)) { dump_handler = fn; }
void netcon_set_stream_handler(void (*fn)(const struct netmsg *m)) { stream_handler = fn; }
bool netcon_host_seen(void) { return host_seen; }
uint64_t netcon_done_refused(void) { return done_refused.count; }

unsigned netcon_seal_words(char *at) { return netauth_seal_words(at, sealed++); }

bool netcon_send(uint8_t *pkt, unsigned len, unsigned head)
{
    netauth_seal(key, pkt, len, head);
    if (proven_ip && !net_to_unicast())     /* the host that proved itself, not everyone */
        return net_send_to(proven_ip, proven_port, pkt, len);
    return net_send_host(pkt, len);
}

static void refuse(struct refusals *r, uint32_t ip)
{
    r->count++;
    r->from = ip;
}

/* A host spoke the protocol: a dump waits for its confirmation now. */
static void heard(uint32_t ip, uint16_t port)
{
    if (!host_seen)
        heard_ip = ip, heard_port = port;
    host_seen = true;
}

/* The sender proved it has this boot's key: dumps go to it from now on. */
static void proven(uint32_t ip, uint16_t port)
{
    proven_ip = ip, proven_port = port;
}

/* A K with a valid tag and a counter above the last (by at most
 * KEY_COUNTER_STEP, so that no one K spends the counter's range): its keys
 * to the queue. Every K's tag is checked, whoever floods (a SipHash of at
 * most NETAUTH_MSG_MAX bytes, bounded by the NIC's frame rate): no flood
 * can crowd out the host with the key. */
static bool take_keys(uint32_t ip, uint16_t port, const struct netmsg *m)
{
    if (keys_off || m->kind != NETMSG_KEYS || !netauth_valid(key, net_mac_text(), nonce, m) ||
        m->counter <= last_counter || m->counter - last_counter > KEY_COUNTER_STEP) {
        refuse(&keys_refused, ip);
        return false;
    }
    last_counter = m->counter;
    proven(ip, port);
    for (unsigned i = 0; i < m->nkeys && key_tail - key_head < KEY_QUEUE; i++)
        keyq[key_tail++ % KEY_QUEUE] = m->keys[i];
    return true;
}

/* A K or A that does not parse: counted as refused all the same. */
static void malformed(uint32_t ip, const uint8_t *p, unsigned len)
{
    if (len >= 6 && !memcmp(p, "BT1 K ", 6))
        refuse(&keys_refused, ip);
    else if (len >= 6 && !memcmp(p, "BT1 A ", 6))
        refuse(&done_refused, ip);
}

/* Under the net lock, from net_poll_locked: never prints. */
static void receive(uint32_t ip, uint16_t port, const uint8_t *p, unsigned len)
{
    struct netmsg m;
    if (!netproto_parse(p, len, &m)) {
        malformed(ip, p, len);
        return;
    }
    switch (m.kind) {
    case NETMSG_KEYS:
    case NETMSG_KEYS_PLAIN:
        if (take_keys(ip, port, &m))
            heard(ip, port);
        return;
    case NETMSG_DONE_PLAIN:
        refuse(&done_refused, ip);
        return;
    case NETMSG_DONE:
    case NETMSG_RESEND:
        if (m.tagged && !netauth_valid(key, net_mac_text(), nonce, &m)) {
            refuse(&done_refused, ip);      /* a request or confirmation with a wrong tag */
            return;
        }
        if (m.tagged)
            proven(ip, port);
        break;
    case NETMSG_WHO:
        if (!who_pending)
            who_pending = true, who_ip = ip, who_port = port;
        break;
    default:
        break;
    }
    heard(ip, port);
    if (m.kind != NETMSG_DONE && m.kind != NETMSG_RESEND)
        return;
    if (dump_handler)                   /* each takes only its own dumps' ids */
        dump_handler(&m);
    if (stream_handler)
        stream_handler(&m);
}

/* Bytes as "BT1 T" datagrams, cut to fit; with the lock held and the
 * network up. */
static void send_text(const char *s, unsigned long n)
{
    while (n) {
        unsigned h = (unsigned)ksnprintf((char *)out, HEADER_MAX, "BT1 T %s %u %016lX",
                                         net_mac_text(), seq++, nonce);
        h += netcon_seal_words((char *)out + h);
        unsigned take = n < NET_PAYLOAD_MAX - h ? (unsigned)n : NET_PAYLOAD_MAX - h;
        memcpy(out + h, s, take);
        netcon_send(out, h + take, h);  /* a failure is counted there */
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
        return;                         /* the session code line: never sent */
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

/* The boot's key: net.key's, else the session code's sixteen characters. */
static void choose_key(const struct boot_config *cfg, uint64_t a, uint64_t b)
{
    netproto_session(a, b, session);
    lab_key = cfg->net_key_set;
    for (unsigned i = 0; i < NETPROTO_KEY_LEN; i++)
        key[i] = lab_key ? cfg->net_key[i] : (uint8_t)session[i];
}

/* The line that tells the user how capture proves itself: never sent. */
static int key_line(char *line, unsigned cap)
{
    char grouped[20];
    netproto_session_grouped(session, grouped);
    if (lab_key)
        return ksnprintf(line, cap, "net: keyed by net.key (scripts/capture --net reads the "
                                    "key its tools made on this host, or --key-file)%s\n",
                         keys_off ? "; remote keys are off (net.keys=off)" : "");
    return ksnprintf(line, cap, "net: session code %s (keys from the host need it: "
                                "scripts/capture --net --session %s)%s\n",
                     grouped, grouped,
                     keys_off ? "; remote keys are off (net.keys=off)" : "");
}

void netcon_init(const struct boot_config *cfg, uint64_t random, uint64_t random2,
                 uint64_t boot_nonce)
{
    if (!net_active())
        return;
    choose_key(cfg, random, random2);
    nonce = boot_nonce;
    keys_off = cfg->net_keys_off;
    net_set_receiver(receive);
    char line[192];
    int len = key_line(line, sizeof line);
    /* The sink first: it gets the boot's text so far (CONSOLE_REPLAY),
     * then the code line, which never goes over the network. */
    started = console_add_sink(sink, NULL, CONSOLE_REPLAY);   /* dumps: recorder/dumpnet.c */
    withhold = true;
    console_lock();
    console_write_locked(line, (unsigned long)len);
    console_unlock();
    withhold = false;
    char words[40], grouped[20];
    netproto_session_grouped(session, grouped);
    ksnprintf(words, sizeof words, lab_key ? "net keyed" : "net session %s", grouped);
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
    unsigned h = (unsigned)ksnprintf((char *)out, ANNOUNCE_HEADER_MAX, "BT1 I %s %016lX %u",
                                     net_mac_text(), nonce, announce_seq);
    h += netcon_seal_words((char *)out + h);
    memcpy(out + h, ready_line, ready_len);
    bool sent;
    if (ip) {
        netauth_seal(key, out, h + ready_len, h);
        sent = net_send_to(ip, port, out, h + ready_len);
    } else {
        sent = netcon_send(out, h + ready_len, h);
    }
    announce_seq += sent;
    return sent;
}

/* With the lock held, idle (no dump in progress): the announcement every
 * ANNOUNCE_US (the first as soon as the network is up, then every
 * ANNOUNCE_UNHEARD_US until a host answers), the answer to Q. */
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
    /* Until a host answers (capture --net answers each I with H), more
     * often for a while: its first H may be lost while the NIC comes up,
     * and a dump waits for a confirmation only once a host has spoken
     * (recorder/dumpnet.h). A host that comes later is answered at once. */
    bool soon = !host_seen && announce_seq < ANNOUNCE_UNHEARD;
    uint64_t every = tsc_from_us(soon ? ANNOUNCE_UNHEARD_US : ANNOUNCE_US);
    if (!announced || now - announce_tsc >= every) {
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

/* Under the lock: whether the first host to speak the protocol is news
 * (said once, after the lock: heard_ip and heard_port never change once
 * set). From now on a dump waits for its confirmation. Unproven (an H is
 * unsigned): the wait is all it can change. */
static bool heard_news(void)
{
    if (!host_seen || heard_said)
        return false;
    heard_said = true;
    return true;
}

static void say_heard(void)
{
    char from[16];
    ipv4_format(heard_ip, from);
    kprintf("net: a host answers from %s:%u: dumps wait for its confirmation\n", from,
            heard_port);
}

int netcon_getc(void)
{
    if (!net_active() || !net_take(0, false))
        return -1;
    net_poll_locked(POLL_BUDGET);
    netcon_send_backlog();
    announce_poll();
    int c = key_head != key_tail ? keyq[key_head++ % KEY_QUEUE] : -1;
    bool news = heard_news();
    net_give();
    net_report();
    say_refused(&keys_refused, "key datagrams",
                keys_off ? "net.keys=off" : "without this boot's key");
    say_refused(&done_refused, "confirmations or requests", "without this boot's key");
    if (news)
        say_heard();
    return c;
}
