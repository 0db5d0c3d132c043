/* dumpnet.c — a dump's lines over UDP, and the host's confirmation (dumpnet.h). */
#include "recorder/dumpnet.h"
#include "arch/cpu.h"
#include "firmware/cmdline.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "net/net.h"
#include "net/netcon.h"
#include "net/netproto.h"
#include "time/deadline.h"
#include "time/tsc.h"

#define WANT_LINES     (1u << 20)        /* lines the resend bitmap covers */
#define WAIT_PERIOD_US 200000ull         /* "BT1 W" this often while waiting */
#define SEND_POLL_EVERY 16               /* datagrams between two receive polls */
#define POLL_BUDGET    64
#define HEADER_MAX     64
#define TAKE_US        100000ull         /* a key's dump waits this long for the stack */

static unsigned dump_to;
static bool active, fault_dump;
static uint64_t nonce;
static uint32_t dump_no, line_no, sent_since_poll;
static uint8_t pkt[NET_PAYLOAD_MAX];
static unsigned pkt_len, pkt_head;       /* bytes in pkt; its header's length */
static uint32_t pkt_next;                /* the line that may follow in pkt */
/* Set by the host's datagrams (under the net lock, from net_poll_locked). */
static uint8_t want[WANT_LINES / 8];
static volatile uint32_t wanted;         /* bits set in want */
static volatile bool want_beyond;        /* asked for lines past WANT_LINES */
static volatile bool confirmed;
static volatile uint32_t replies;        /* R or A datagrams for this dump */

void dumpnet_init(unsigned to) { dump_to = to; }

bool dumpnet_would_take(void)
{
    return (!dump_to || (dump_to & DUMP_TO_NET)) && net_active() && net_link_now();
}

static void flush(void)
{
    if (pkt_len > pkt_head)
        net_send_host(pkt, pkt_len);
    pkt_len = 0;
    if (++sent_since_poll >= SEND_POLL_EVERY) {   /* ARP questions, early R */
        sent_since_poll = 0;
        net_poll_locked(POLL_BUDGET);
    }
}

/* Put line `no` (n bytes, "\n" included) into the datagram being filled. */
static void put_line(uint32_t no, const char *s, size_t n)
{
    if (pkt_len && (no != pkt_next || pkt_len + n > NET_PAYLOAD_MAX))
        flush();
    if (!pkt_len) {
        pkt_head = (unsigned)ksnprintf((char *)pkt, HEADER_MAX, "BT1 D %s %016lX.%u %u\n",
                                       net_mac_text(), nonce, dump_no, no);
        pkt_len = pkt_head;
    }
    if (pkt_len + n > NET_PAYLOAD_MAX)
        return;                          /* longer than DUMP_LINE_MAX: never */
    memcpy(pkt + pkt_len, s, n);
    pkt_len += (unsigned)n;
    pkt_next = no + 1;
}

static void to_net(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    put_line(line_no++, s, n);
}

static void handler(const struct netmsg *m)
{
    if (!active || m->nonce != nonce || m->dump != dump_no)
        return;
    replies++;
    if (m->kind == NETMSG_DONE) {
        confirmed = true;
        return;
    }
    if (m->kind != NETMSG_RESEND)
        return;
    for (unsigned i = 0; i < m->nranges; i++)
        for (uint64_t l = m->range[i].first; l <= m->range[i].last && l < line_no; l++) {
            if (l >= WANT_LINES) {
                want_beyond = true;
                break;
            }
            if (!(want[l / 8] & 1u << (l % 8))) {
                want[l / 8] |= (uint8_t)(1u << (l % 8));
                wanted++;
            }
        }
}

/* A link but no address yet (DHCP under way, or its link-local fallback
 * coming): worth a bounded wait, the dump may be a fault's. */
static void wait_for_address(bool fault)
{
    struct deadline end = deadline_in_us(DUMPNET_ADDRESS_WAIT_US);
    while (!net_up() && net_link_now() && !deadline_passed(end))
        if (net_take(TAKE_US, fault)) {
            net_poll_locked(POLL_BUDGET);
            net_give();
        }
}

bool dumpnet_only(void) { return dump_to == DUMP_TO_NET; }

bool dumpnet_open(const struct dump_meta *meta, enum dumpnet_cause cause)
{
    bool fault = cause == DUMPNET_FAULT;
    bool want_net = !dump_to || (dump_to & DUMP_TO_NET);
    if (!want_net || !net_active())
        return false;
    wait_for_address(fault);        /* an NMI's dump waits like a key's */
    if (!net_up()) {
        kprintf("dumpnet: the network is not up (no link or no address yet): this dump "
                "skips it%s\n", dumpnet_only() ? " and goes to the serial console" : "");
        return false;
    }
    if (net_held_here() && !fault) {       /* an NMI inside the stack: it resumes later */
        kprintf("dumpnet: this CPU was stopped inside the network stack; this dump skips "
                "the network\n");
        return false;
    }
    if (!net_take(cause == DUMPNET_KEY ? TAKE_US : NET_STEAL_US, fault)) {
        kprintf("dumpnet: the network stack stayed busy; this dump skips the network\n");
        return false;
    }
    netcon_set_dump_handler(handler);
    active = true;
    fault_dump = fault;
    nonce = meta->nonce, dump_no = meta->dump_no;
    line_no = 0, pkt_len = 0, sent_since_poll = 0;
    memset(want, 0, sizeof want);
    wanted = 0, want_beyond = false, confirmed = false, replies = 0;
    return true;
}

uint64_t dumpnet_send(const struct dump_meta *meta, struct ring *const rings[], unsigned n,
                      void (*progress)(const struct dump_progress *p))
{
    const struct dump_sink sink = { to_net, NULL, progress };
    uint64_t events = dump_encode(&sink, meta, rings, n);
    flush();
    return events;
}

/* The lines the host asked for, encoded again from the same rings. */
static uint32_t resend_line;
static uint32_t resent, last_asked;      /* lines sent again; in the host's last request */

static void filter(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    uint32_t l = resend_line++;
    bool again = l < WANT_LINES ? (want[l / 8] >> (l % 8)) & 1 : want_beyond;
    if (!again)
        return;
    if (l < WANT_LINES)
        want[l / 8] &= (uint8_t)~(1u << (l % 8));
    resent++;
    put_line(l, s, n);
}

static void resend(const struct dump_meta *meta, struct ring *const rings[], unsigned n)
{
    last_asked = wanted;
    wanted = 0;                          /* the bits themselves clear as lines go */
    resend_line = 0;
    const struct dump_sink s = { filter, NULL, NULL };
    dump_encode(&s, meta, rings, n);
    want_beyond = false;
    flush();
}

static void status(char kind, uint64_t arg)
{
    unsigned len = (unsigned)ksnprintf((char *)pkt, HEADER_MAX, "BT1 %c %s %016lX.%u %u %lu\n",
                                       kind, net_mac_text(), nonce, dump_no, line_no, arg);
    net_send_host(pkt, len);
    pkt_len = 0;
}

void dumpnet_close(const struct dump_meta *meta, struct ring *const rings[], unsigned n)
{
    uint64_t t0 = rdtsc(), heard = t0;
    uint64_t quiet = tsc_from_us(netcon_host_seen() ? DUMPNET_QUIET_US : DUMPNET_NO_HOST_US);
    uint64_t max = tsc_from_us(DUMPNET_WAIT_MAX_US), period = tsc_from_us(WAIT_PERIOD_US);
    uint32_t seen = 0;
    bool held = true;
    resent = last_asked = 0;
    while (!confirmed) {
        uint64_t now = rdtsc();
        if (now - heard > quiet || now - t0 > max)
            break;
        status('W', tsc_to_us(t0 + max - now) / 1000);
        net_give();                      /* others may print or poll between two looks */
        uint64_t w0 = rdtsc();
        while (rdtsc() - w0 < period && !confirmed && !wanted && !want_beyond) {
            if (net_take(0, false)) {
                net_poll_locked(POLL_BUDGET);
                net_give();
            }
            cpu_relax();
        }
        if (!net_take(fault_dump ? NET_STEAL_US : DUMPNET_QUIET_US, fault_dump)) {
            held = false;                /* the stack stayed busy: stop here */
            break;
        }
        if (replies != seen)
            seen = replies, heard = rdtsc(), quiet = tsc_from_us(DUMPNET_QUIET_US);
        if (!confirmed && (wanted || want_beyond))
            resend(meta, rings, n);
    }
    active = false;
    uint32_t lines = line_no;
    if (held) {
        status('X', confirmed ? 0 : line_no);
        net_give();
    }
    if (confirmed)
        kprintf("dumpnet: dump %u: the host confirmed all %u lines (%u sent again)\n",
                dump_no, lines, resent);
    else if (!seen)
        kprintf("dumpnet: dump %u: no host confirmed any of its %u lines (none answered; "
                "scripts/capture --net asks for what it lacks)\n", dump_no, lines);
    else
        kprintf("dumpnet: dump %u: the host did not confirm its %u lines before the wait "
                "ended (%u sent again; its last request asked for %u%s)\n", dump_no, lines,
                resent, last_asked, want_beyond ? " and more" : "");
}
