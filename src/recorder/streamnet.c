/* streamnet.c — a stream's parts kept, sent, resent and confirmed
 * (streamnet.h). */
#include "recorder/streamnet.h"
#include "arch/cpu.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "mm/mem.h"
#include "net/net.h"
#include "net/netcon.h"
#include "recorder/netpack.h"
#include "time/tsc.h"

#define LINE_MIN       16                 /* bytes: no dump line is shorter */
#define SEND_BYTES     (32 * NET_PAYLOAD_MAX)   /* of lines, per poll */
#define WAIT_PERIOD_US 200000ull          /* "BT1 W" this often while waiting */
#define POLL_BUDGET    64
#define SAY_EVERY_US   60000000ull        /* a give-up on the console at most this often */

enum slot_state { SLOT_FREE,
                  SLOT_FILLING,
                  SLOT_SENDING,
                  SLOT_WAITING };

struct slot {
    enum slot_state state;
    uint32_t dump_no;
    char *buf;                  /* the lines, as encoded */
    uint32_t *start;            /* [max_lines + 1]: line l is buf[start[l], start[l + 1]) */
    uint32_t lines, sent;       /* kept; sent so far (SENDING) */
    uint32_t resend_at;         /* the next line a resend pass looks at */
    bool resending;
    struct netpack pack;
    struct netwant want;        /* set by the host's R (handler) */
    volatile bool confirmed;    /* set by its A (handler) */
    uint64_t quiet_from, w_last;   /* TSC: the host's quiet time runs from; the last W */
    struct dump_sink sink;
};

static struct slot slots[STREAMNET_SLOTS];
static size_t room;
static uint32_t max_lines;
static uint64_t nonce;
static volatile uint32_t heard, heard_seen;   /* the host's answers to any part */
static struct streamnet_counts counts;

static void keep_line(void *ctx, const char *s, size_t n)
{
    struct slot *p = ctx;
    size_t at = p->start[p->lines];
    if (p->lines >= max_lines || at + n > room) {
        counts.overflow++;
        return;
    }
    memcpy(p->buf + at, s, n);
    p->start[++p->lines] = (uint32_t)(at + n);
}

bool streamnet_init(size_t bytes)
{
    room = bytes;
    max_lines = (uint32_t)(bytes / LINE_MIN);
    for (unsigned i = 0; i < STREAMNET_SLOTS; i++) {
        struct slot *p = &slots[i];
        p->buf = mem_alloc(bytes, 64);
        p->start = mem_alloc((max_lines + 1ull) * sizeof *p->start, sizeof *p->start);
        p->want.bits = mem_alloc(max_lines / 8 + 1, 8);
        p->want.cover = max_lines;
        p->sink = (struct dump_sink){ keep_line, p, NULL };
        if (!p->buf || !p->start || !p->want.bits) {
            kprintf("stream: no memory for %u parts of %lu KiB: no streams\n", STREAMNET_SLOTS,
                    (uint64_t)bytes / 1024);
            room = 0;
            return false;
        }
    }
    return true;
}

size_t streamnet_room(void) { return room; }

/* The host's R and A (net lock held, from net_poll_locked). */
static void handler(const struct netmsg *m)
{
    if (m->nonce != nonce)
        return;
    for (unsigned i = 0; i < STREAMNET_SLOTS; i++) {
        struct slot *p = &slots[i];
        if (p->state < SLOT_SENDING || p->dump_no != m->dump)
            continue;
        if (m->kind == NETMSG_RESEND && !netwant_request(&p->want, m, p->lines))
            return;
        heard++;
        if (m->kind == NETMSG_DONE)
            p->confirmed = true;
    }
}

void streamnet_listen(bool on) { netcon_set_stream_handler(on ? handler : NULL); }

const struct dump_sink *streamnet_fill(uint64_t boot_nonce, uint32_t dump_no)
{
    for (unsigned i = 0; room && i < STREAMNET_SLOTS; i++) {
        struct slot *p = &slots[i];
        if (p->state != SLOT_FREE)
            continue;
        nonce = boot_nonce;
        p->state = SLOT_FILLING;
        p->dump_no = dump_no;
        p->lines = p->sent = p->resend_at = 0;
        p->start[0] = 0;
        p->resending = false;
        p->confirmed = false;
        netwant_reset(&p->want);
        netpack_start(&p->pack, boot_nonce, dump_no);
        return &p->sink;
    }
    return NULL;
}

void streamnet_queue(void)
{
    for (unsigned i = 0; i < STREAMNET_SLOTS; i++)
        if (slots[i].state == SLOT_FILLING) {
            slots[i].quiet_from = rdtsc();
            __atomic_store_n(&slots[i].state, SLOT_SENDING, __ATOMIC_RELEASE);
        }
}

unsigned streamnet_unconfirmed(void)
{
    unsigned n = 0;
    for (unsigned i = 0; i < STREAMNET_SLOTS; i++)
        n += slots[i].state != SLOT_FREE;
    return n;
}

void streamnet_counts(struct streamnet_counts *c) { *c = counts; }

/* Line l of p into its datagrams; the bytes it costs. */
static size_t send_line(struct slot *p, uint32_t l)
{
    size_t n = p->start[l + 1] - p->start[l];
    netpack_line(&p->pack, l, p->buf + p->start[l], n);
    counts.bytes += n;
    return n;
}

/* Lines not sent yet, then the host's requests, within *budget bytes. */
static void send_some(struct slot *p, size_t *budget)
{
    while (p->state == SLOT_SENDING && *budget) {
        if (p->sent == p->lines) {
            netpack_flush(&p->pack);
            p->state = SLOT_WAITING;
            p->quiet_from = rdtsc(), p->w_last = 0;
            break;
        }
        size_t n = send_line(p, p->sent++);
        *budget -= *budget < n ? *budget : n;
    }
    if (p->state != SLOT_WAITING)
        return;
    if (!p->resending && (p->want.wanted || p->want.beyond)) {
        p->want.wanted = 0;             /* the bits themselves clear as lines go */
        p->resending = true, p->resend_at = 0;
    }
    for (; p->resending && *budget && p->resend_at < p->lines; p->resend_at++)
        if (netwant_take(&p->want, p->resend_at)) {
            size_t n = send_line(p, p->resend_at);
            *budget -= *budget < n ? *budget : n;
            counts.resent++;
        }
    if (p->resending && p->resend_at == p->lines) {
        p->resending = false, p->want.beyond = false;
        netpack_flush(&p->pack);
        p->w_last = 0;                  /* W right after: the host's cue */
    }
}

/* The host's quiet time left for p, in TSC ticks (0: give the part up). */
static uint64_t quiet_left(const struct slot *p, uint64_t now)
{
    uint64_t quiet = tsc_from_us(STREAMNET_QUIET_US);
    uint64_t gone = now > p->quiet_from ? now - p->quiet_from : 0;
    return gone < quiet ? quiet - gone : 0;
}

/* One slot's turn, net lock held; true when it was given up. */
static bool slot_turn(struct slot *p, uint64_t now, bool can_send, size_t *budget)
{
    if (p->confirmed) {
        netpack_status(&p->pack, 'X', p->lines, 0);
        counts.confirmed++;
        p->state = SLOT_FREE;
        return false;
    }
    if (p->state == SLOT_WAITING && !quiet_left(p, now)) {
        netpack_status(&p->pack, 'X', p->lines, p->lines);
        counts.given_up++;
        p->state = SLOT_FREE;
        return true;
    }
    if (!can_send)
        return false;
    send_some(p, budget);
    if (p->state == SLOT_WAITING && !p->resending &&
        (!p->w_last || now - p->w_last >= tsc_from_us(WAIT_PERIOD_US))) {
        netpack_status(&p->pack, 'W', p->lines, tsc_to_us(quiet_left(p, now)) / 1000);
        p->w_last = now;
    }
    return false;
}

/* A part given up, said at most every SAY_EVERY_US (no host at all
 * gives one up every few seconds); `s` has the count. */
static void say_given_up(uint32_t dump_no, uint64_t now)
{
    static uint64_t said_at, said;
    if (said_at && now - said_at < tsc_from_us(SAY_EVERY_US))
        return;
    kprintf("stream: part (dump %u) given up: the host was quiet for %lu s (%lu parts given "
            "up in all, %lu not said)\n",
            dump_no, (uint64_t)(STREAMNET_QUIET_US / 1000000), counts.given_up,
            counts.given_up - said - 1);
    said_at = now, said = counts.given_up;
}

void streamnet_poll(bool paused)
{
    uint64_t now = rdtsc();
    bool can_send = !paused && net_up();
    uint32_t h = heard;
    bool restart = h != heard_seen || !can_send;   /* answered, or the quiet time stops */
    heard_seen = h;
    for (unsigned i = 0; i < STREAMNET_SLOTS; i++)
        if (restart && slots[i].state >= SLOT_SENDING)
            slots[i].quiet_from = now;
    if (!streamnet_unconfirmed() || !net_take(0, false))
        return;
    net_poll_locked(POLL_BUDGET);
    size_t budget = SEND_BYTES;
    uint32_t gave_up[STREAMNET_SLOTS], n_gave = 0;
    /* The older part first: its lines are the host's next to write. */
    _Static_assert(STREAMNET_SLOTS == 2, "two slots: the older is one of the two");
    unsigned first = slots[1].state >= SLOT_SENDING && slots[1].dump_no < slots[0].dump_no;
    for (unsigned k = 0; k < STREAMNET_SLOTS; k++) {
        struct slot *p = &slots[(first + k) % STREAMNET_SLOTS];
        if (p->state >= SLOT_SENDING && slot_turn(p, now, can_send, &budget))
            gave_up[n_gave++] = p->dump_no;
    }
    net_give();
    for (unsigned i = 0; i < n_gave; i++)   /* never print with the lock held */
        say_given_up(gave_up[i], now);
}
