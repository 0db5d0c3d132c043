/* netcon.c — console lines out, keys in (netcon.h). */
#include "net/netcon.h"
#include "arch/cpu.h"
#include "console/status.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "net/ipv4.h"
#include "net/net.h"
#include "time/tsc.h"

#define KEY_QUEUE      64               /* a power of two */
#define LINE_WAIT_US   20000ull         /* a console line waits this long for the stack */
#define POLL_BUDGET    32
#define HEADER_MAX     48
#define BACKLOG        16384
#define REFUSED_SAY_US 1000000ull       /* refused keys are said at most this often */
#define KEY_TRIES_PER_S 20              /* key datagrams looked at per second, at most */

static char session[NETPROTO_SESSION_LEN + 1];
static bool keys_off, host_seen, started;
static bool withhold;                   /* the line being printed is not for the network */
static uint8_t keyq[KEY_QUEUE];
static unsigned key_head, key_tail;     /* under the net lock */
static uint32_t seq;
static uint64_t refused, refused_said;
static uint32_t refused_from;
static uint64_t refused_tsc;            /* when refusals were last said */
static uint64_t tries_tsc;              /* this second's key datagrams began then */
static unsigned tries;
static void (*dump_handler)(const struct netmsg *m);
static uint8_t out[NET_PAYLOAD_MAX];
/* Console text from before the network was up (no link or address yet),
 * sent when it is; beyond BACKLOG bytes, counted instead. */
static char backlog[BACKLOG];
static unsigned backlog_len;
static uint64_t backlog_cut;

void netcon_set_dump_handler(void (*fn)(const struct netmsg *m)) { dump_handler = fn; }
bool netcon_host_seen(void) { return host_seen; }

static bool same_session(const char *s)
{
    return !memcmp(s, session, NETPROTO_SESSION_LEN);
}

/* Under the net lock, from net_poll_locked: never prints. */
static void receive(uint32_t ip, uint16_t port, const uint8_t *p, unsigned len)
{
    (void)port;
    struct netmsg m;
    if (!netproto_parse(p, len, &m))
        return;
    if (m.kind != NETMSG_KEYS) {
        host_seen = true;
        if (dump_handler)
            dump_handler(&m);
        return;
    }
    /* A guesser gets KEY_TRIES_PER_S tries a second: 2^30 codes then take
     * years, while the host with the code gets every key through. */
    uint64_t now = rdtsc();
    if (now - tries_tsc >= tsc_from_us(1000000))
        tries_tsc = now, tries = 0;
    if (keys_off || ++tries > KEY_TRIES_PER_S || !same_session(m.session)) {
        refused++;
        refused_from = ip;
        return;
    }
    for (unsigned i = 0; i < m.nkeys && key_tail - key_head < KEY_QUEUE; i++)
        keyq[key_tail++ % KEY_QUEUE] = m.keys[i];
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
static void send_backlog(void)
{
    if (!backlog_len || !net_ready())
        return;
    send_text(backlog, backlog_len);
    backlog_len = 0;
    if (backlog_cut) {
        char line[112];
        int n = ksnprintf(line, sizeof line, "net: %lu bytes of console text from before the "
                          "network was up were not kept\n", backlog_cut);
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
        send_backlog();
        send_text(s, n);
    } else {
        unsigned long room = BACKLOG - backlog_len, take = n < room ? n : room;
        memcpy(backlog + backlog_len, s, take);
        backlog_len += (unsigned)take;
        backlog_cut += n - take;
    }
    net_give();
}

void netcon_init(const struct boot_config *cfg, uint64_t random)
{
    if (!net_active())
        return;
    netproto_session(random, session);
    keys_off = cfg->net_keys_off;
    net_set_receiver(receive);
    /* The code on the screen and serial console; over the network only to
     * a host net.to names. */
    char line[160];
    int len = ksnprintf(line, sizeof line, "net: session code %s (keys from the host need it: "
                        "scripts/capture --net --session %s)%s\n", session, session,
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
            "%lu; transmit ring full %lu; key datagrams refused %lu\n", where, c.sent,
            c.not_sent, c.received, c.rx_errors, c.tx_full, refused);
}

int netcon_getc(void)
{
    if (!net_active() || !net_take(0, false))
        return -1;
    net_poll_locked(POLL_BUDGET);
    send_backlog();
    int c = key_head != key_tail ? keyq[key_head++ % KEY_QUEUE] : -1;
    net_give();
    net_report();
    if (refused != refused_said && rdtsc() - refused_tsc >= tsc_from_us(REFUSED_SAY_US)) {
        refused_tsc = rdtsc();
        char from[16];
        ipv4_format(refused_from, from);
        kprintf("net: %lu key datagrams refused so far (%s; the last from %s)\n", refused,
                keys_off ? "net.keys=off" : "without this boot's session code", from);
        refused_said = refused;
    }
    return c;
}
