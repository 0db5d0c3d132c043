/* netcon.h — the console over the network, both ways.
 *
 * Out: a console sink (lib/kprintf.h) that sends every console line to
 * net.to as a "BT1 T" datagram (net/netproto.h), and the announcement
 * ("BT1 I", the READY line) while idle, every datagram sealed with the
 * boot's key (net/netauth.h). In: keys from the host ("BT1 K"), taken
 * only when signed with the boot's key, each with a counter above the
 * last; every K's tag is checked whoever else floods. The key is
 * net.key's, else the session code's, which shows on the machine's
 * screen and serial console and never goes over the network;
 * net.keys=off refuses every key. The dump protocol's datagrams ("BT1
 * R", and "A" with a valid tag) go to the handlers recorder/dumpnet.c
 * and recorder/streamnet.c set; "A" without one is refused and counted. */
#ifndef NET_NETCON_H
#define NET_NETCON_H
#include <stdbool.h>
#include <stdint.h>
#include "firmware/cmdline.h"
#include "net/netproto.h"

/* After net_init: the sink, the session code (80 bits of random and
 * random2) and the boot's key (net.key's, else the code's); boot_nonce is
 * the boot's nonce (recorder/dumpid.h), which every tag binds. */
void netcon_init(const struct boot_config *cfg, uint64_t random, uint64_t random2,
                 uint64_t boot_nonce);
/* With the net lock held: the seal's words for a datagram being built
 * (" <counter> <zeros>\n", the next counter), written at `at` (room for
 * NETAUTH_SEAL_MAX); their length. */
unsigned netcon_seal_words(char *at);
/* With the net lock held: seal a datagram (its header, seal words
 * included, is head bytes) and send it to the host: the one that proved
 * it has the key when net.to is the broadcast address and one has, else
 * net.to. False when it could not be sent (counted). */
bool netcon_send(uint8_t *pkt, unsigned len, unsigned head);
/* Confirmations and requests refused so far (a wrong tag): a dump's
 * wait names them. */
uint64_t netcon_done_refused(void);
/* The READY line (without "\n"): announced as "BT1 I" now, then every
 * 5 s while no dump is in progress (every second for the first 30 while
 * no host has answered), and to whoever asks with "BT1 Q". Once a host
 * first speaks the protocol, the console says so (its address and port). */
void netcon_set_ready(const char *line);
/* The next key from the host, or -1; polls the network first (keys CPU). */
int netcon_getc(void);
/* Called with the net lock held for each RESEND (m->tagged: signed and
 * valid) or (signed, valid) DONE datagram. Set while a dump is in progress, NULL otherwise: no
 * announcements meanwhile. */
void netcon_set_dump_handler(void (*fn)(const struct netmsg *m));
/* The same for a stream's parts (recorder/streamnet.c), set while a
 * stream runs; announcements go on meanwhile. Both handlers see every
 * RESEND and DONE and take those of their own dump ids. */
void netcon_set_stream_handler(void (*fn)(const struct netmsg *m));
/* With the net lock held: the console text kept from before the network
 * was up, sent now (a dump sends it first, so the host has the text
 * before the dump). */
void netcon_send_backlog(void);
/* One line for `s`: the interface, its address and counters, keys refused. */
void netcon_print_stats(void);
/* A host has spoken the protocol since boot (it will confirm dumps). */
bool netcon_host_seen(void);

#endif
