/* netpack.h — dump lines into "BT1 D" datagrams, the "BT1 W" and "BT1 X"
 * status datagrams (docs/network-protocol.md), and the host's requests
 * for lines again ("BT1 R"): what a dump (dumpnet.c) and a stream's parts
 * (streamnet.c) send and hear alike.
 *
 * Packing: consecutive lines share a datagram (at most NET_PAYLOAD_MAX
 * bytes), each datagram headed "BT1 D <mac> <nonce>.<dump> <first line>"
 * and sealed (net/netcon.h). Every call that sends runs with the net lock
 * held; every SEND_POLL_EVERY datagrams the receive side is polled, so
 * ARP questions and early requests are answered during a long send.
 *
 * Requests: a bitmap of the lines the host asked for. Unsigned requests
 * may have each line sent about NETPACK_UNPROVEN_RESENDS times; beyond
 * that only a signed one is heard (a forged R flood cannot make the
 * machine an amplifier, nor hold its wait). */
#ifndef RECORDER_NETPACK_H
#define RECORDER_NETPACK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "net/net.h"
#include "net/netproto.h"

#define NETPACK_UNPROVEN_RESENDS 3

struct netpack {
    uint64_t nonce;
    uint32_t dump_no;
    uint32_t next;              /* the line that may follow in pkt */
    unsigned len, head;         /* bytes in pkt; its header's length */
    unsigned since_poll;        /* datagrams since the last receive poll */
    uint8_t pkt[NET_PAYLOAD_MAX];
};

/* The datagrams of dump <nonce>.<dump_no> (no lock needed). */
void netpack_start(struct netpack *p, uint64_t nonce, uint32_t dump_no);
/* Line `no` (n bytes, "\n" included) into the datagram being filled;
 * sends the one before when it does not follow or fit. */
void netpack_line(struct netpack *p, uint32_t no, const char *s, size_t n);
/* Sends the datagram being filled, if any. */
void netpack_flush(struct netpack *p);
/* "BT1 <kind> <mac> <id> <lines> <arg>": W (arg: ms the machine waits at
 * most) or X (arg: lines not confirmed). */
void netpack_status(struct netpack *p, char kind, uint32_t lines, uint64_t arg);

struct netwant {
    uint8_t *bits;              /* [cover / 8]: line l asked for */
    uint32_t cover;             /* lines the bitmap covers */
    volatile uint32_t wanted;   /* bits set since the caller last cleared it */
    volatile bool beyond;       /* lines past cover asked for */
    uint64_t unproven;          /* lines unsigned requests asked for (bounded) */
};

void netwant_reset(struct netwant *w);
/* A RESEND for a dump of `lines` lines, from the handler (net lock held):
 * false when it is not heard (unsigned, and the budget is spent). */
bool netwant_request(struct netwant *w, const struct netmsg *m, uint32_t lines);
/* Whether line l is asked for (and no longer, after this). */
bool netwant_take(struct netwant *w, uint32_t l);

#endif
