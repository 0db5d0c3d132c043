/* dumpnet.c — a dump's lines over UDP, and the host's confirmation (dumpnet.h). */
#include "recorder/dumpnet.h"
#include "arch/cpu.h"
#include "firmware/cmdline.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "net/net.h"
#include "net/netcon.h"
#include "net/netproto.h"
#include "recorder/netpack.h"
#include "time/deadline.h"
#include "time/tsc.h"

#define WANT_LINES     (1u << 20)        /* lines the resend bitmap covers */
#define WAIT_PERIOD_US 200000ull         /* "BT1 W" this often while waiting */
#define POLL_BUDGET    64
#define TAKE_US        100000ull         /* a key's dump waits this long for the stack */

static unsigned dump_to;
static bool active;
static enum dumpnet_cause cause_now;        /* the dump under way's */
static uint64_t nonce;
static uint32_t dump_no, line_no;
static struct netpack pack;
/* Set by the host's datagrams (under the net lock, from net_poll_locked). */
static uint8_t want_bits[WANT_LINES / 8];
static struct netwant want = { want_bits, WANT_LINES, 0, false, 0 };
static volatile bool confirmed;
static volatile uint32_t replies;        /* R or A datagrams for this dump */
static uint64_t refused_before;          /* wrong-tag confirmations before this dump */

void dumpnet_init(unsigned to) { dump_to = to; }

bool dumpnet_would_take(void)
{
    return (!dump_to || (dump_to & DUMP_TO_NET)) && net_active() && net_link_now();
}

static void to_net(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    netpack_line(&pack, line_no++, s, n);
}

static void handler(const struct netmsg *m)
{
    if (!active || m->nonce != nonce || m->dump != dump_no)
        return;
    if (m->kind == NETMSG_RESEND && !netwant_request(&want, m, line_no))
        return;
    replies++;
    if (m->kind == NETMSG_DONE)
        confirmed = true;
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
                "skips it%s\n",
                dumpnet_only() ? " and goes to the serial console" : "");
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
    netcon_send_backlog();          /* the text before it first */
    netcon_set_dump_handler(handler);
    active = true;
    cause_now = cause;
    nonce = meta->nonce, dump_no = meta->dump_no;
    line_no = 0;
    netpack_start(&pack, nonce, dump_no);
    netwant_reset(&want);
    confirmed = false, replies = 0;
    refused_before = netcon_done_refused();
    return true;
}

uint64_t dumpnet_send(const struct dump_meta *meta, struct ring *const rings[], unsigned n,
                      void (*progress)(const struct dump_progress *p))
{
    const struct dump_sink sink = { to_net, NULL, progress };
    uint64_t events = dump_encode(&sink, meta, rings, n);
    netpack_flush(&pack);
    return events;
}

/* The lines the host asked for, encoded again from the same rings. */
static uint32_t resend_line;
static uint32_t resent, last_asked;      /* lines sent again; in the host's last request */

static void filter(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    uint32_t l = resend_line++;
    if (!netwant_take(&want, l))
        return;
    resent++;
    netpack_line(&pack, l, s, n);
}

static void resend(const struct dump_meta *meta, struct ring *const rings[], unsigned n)
{
    last_asked = want.wanted;
    want.wanted = 0;                     /* the bits themselves clear as lines go */
    resend_line = 0;
    const struct dump_sink s = { filter, NULL, NULL };
    dump_encode(&s, meta, rings, n);
    want.beyond = false;
    netpack_flush(&pack);
}

static void status(char kind, uint64_t arg) { netpack_status(&pack, kind, line_no, arg); }

/* Why a dump's wait ended (said on the console). */
enum wait_end { WAIT_CONFIRMED,
                WAIT_LINK_DOWN,
                WAIT_NO_HOST,
                WAIT_HOST_QUIET,
                WAIT_BOUND,
                WAIT_BUSY };

/* The host's requests for up to WAIT_PERIOD_US, polling; without the lock. */
static void listen_a_while(void)
{
    struct deadline end = deadline_in_us(WAIT_PERIOD_US);
    while (!deadline_passed(end) && !confirmed && !want.wanted && !want.beyond) {
        if (net_take(0, false)) {
            net_poll_locked(POLL_BUDGET);
            net_give();
        }
        cpu_relax();
    }
}

/* A dump's wait: its 60 s bound, the host's quiet time (which restarts
 * when the host answers or the link comes back), the link's down time. */
struct wait {
    struct deadline bound, quiet;
    uint64_t quiet_us;
    uint64_t down_since, down_total;     /* TSC values; down_since 0: the link is up */
};

static uint64_t ms_left(const struct wait *w, uint64_t now)
{
    return w->bound.end > now ? tsc_to_us(w->bound.end - now) / 1000 : 0;
}

/* Follow the link; true when it just went down. */
static bool follow_link(struct wait *w, uint64_t now)
{
    bool up = net_link_now();
    if (!up && !w->down_since) {
        w->down_since = now;
        return true;
    }
    if (up && w->down_since) {           /* back: the host's quiet time starts again */
        w->down_total += now - w->down_since;
        w->down_since = 0;
        w->quiet = deadline_in_us(w->quiet_us);
    }
    return false;
}

/* Why the wait ends now, or WAIT_CONFIRMED to go on. */
static enum wait_end wait_over(const struct wait *w, uint32_t seen)
{
    if (deadline_passed(w->bound))
        return w->down_since ? WAIT_LINK_DOWN : seen ? WAIT_BOUND
                                                     : WAIT_NO_HOST;
    if (!w->down_since && deadline_passed(w->quiet))
        return seen ? WAIT_HOST_QUIET : WAIT_NO_HOST;
    return WAIT_CONFIRMED;
}

static void say_end(enum wait_end why, uint32_t lines, uint64_t down_ms)
{
    char down[160] = "";
    uint64_t wrong = netcon_done_refused() - refused_before;
    int at = 0;
    if (wrong)
        at = ksnprintf(down, sizeof down, "; a host answered with a wrong code: %lu "
                                          "confirmations or requests refused",
                       wrong);
    if (down_ms && why != WAIT_LINK_DOWN)
        ksnprintf(down + at, sizeof down - (unsigned)at, "; the link was down %lu ms "
                                                         "meanwhile",
                  down_ms);
    if (why == WAIT_CONFIRMED)
        kprintf("dumpnet: dump %u: the host confirmed all %u lines (%u sent again%s)\n",
                dump_no, lines, resent, down);
    else if (why == WAIT_LINK_DOWN)
        kprintf("dumpnet: dump %u: not confirmed: the link is down (for %lu ms, until the "
                "wait's %u s bound); none of its %u lines is confirmed\n",
                dump_no, down_ms,
                (unsigned)(DUMPNET_WAIT_MAX_US / 1000000), lines);
    else if (why == WAIT_NO_HOST)
        kprintf("dumpnet: dump %u: no host confirmed any of its %u lines (%s%s; "
                "scripts/capture --net asks for what it lacks)\n",
                dump_no, lines,
                wrong ? "no host with this boot's key answered" : "none answered", down);
    else
        kprintf("dumpnet: dump %u: the host did not confirm its %u lines before the wait "
                "ended (%s; %u sent again; its last request asked for %u%s%s)\n",
                dump_no,
                lines, why == WAIT_HOST_QUIET ? "the host stopped answering" : why == WAIT_BOUND ? "the 60 s bound ended"
                                                                                                 : "the network stack stayed busy",
                resent, last_asked, want.beyond ? " and more" : "", down);
}

void dumpnet_close(const struct dump_meta *meta, struct ring *const rings[], unsigned n)
{
    bool fault = cause_now == DUMPNET_FAULT;
    uint64_t no_host_us = cause_now == DUMPNET_KEY ? DUMPNET_NO_HOST_US : DUMPNET_NO_HOST_RARE_US;
    struct wait w = { deadline_in_us(DUMPNET_WAIT_MAX_US), { 0 }, netcon_host_seen() ? DUMPNET_QUIET_US : no_host_us, 0, 0 };
    w.quiet = deadline_in_us(w.quiet_us);
    uint32_t seen = 0;
    enum wait_end why = WAIT_CONFIRMED;
    resent = last_asked = 0;
    while (!confirmed) {
        uint64_t now = rdtsc();
        bool went_down = follow_link(&w, now);
        if ((why = wait_over(&w, seen)) != WAIT_CONFIRMED)
            break;
        if (!w.down_since)
            status('W', ms_left(&w, now));
        net_give();                      /* others may print or poll between two looks */
        if (went_down)
            kprintf("dumpnet: dump %u: link down; the snapshot is kept, waiting for the link "
                    "(at most %lu s more)\n",
                    dump_no, ms_left(&w, now) / 1000);
        listen_a_while();
        if (!net_take(fault ? NET_STEAL_US : DUMPNET_QUIET_US, fault)) {
            why = WAIT_BUSY;             /* the stack stayed busy: stop here */
            break;
        }
        /* An answer to this dump, or the first word of any host (its H
         * to the dump's first datagram, say): the host's quiet time
         * starts again, at its full length. */
        if (replies != seen || (w.quiet_us != DUMPNET_QUIET_US && netcon_host_seen())) {
            seen = replies, w.quiet_us = DUMPNET_QUIET_US;
            w.quiet = deadline_in_us(w.quiet_us);
        }
        if (!confirmed && (want.wanted || want.beyond))
            resend(meta, rings, n);
    }
    active = false;
    netcon_set_dump_handler(NULL);
    uint32_t lines = line_no;
    if (why != WAIT_BUSY) {
        status('X', confirmed ? 0 : line_no);
        net_give();
    }
    if (w.down_since)
        w.down_total += rdtsc() - w.down_since;
    say_end(confirmed ? WAIT_CONFIRMED : why, lines, tsc_to_us(w.down_total) / 1000);
}
