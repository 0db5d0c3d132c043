/* netcon.h — the console over the network, both ways.
 *
 * Out: a console sink (lib/kprintf.h) that sends every console line to
 * net.to as a "BT1 T" datagram (net/netproto.h), and the announcement
 * ("BT1 I", the READY line) while idle. In: keys from the host ("BT1
 * K"), taken only when signed with this boot's session code
 * (net/netauth.h), each with a counter above the last, within a budget
 * per sender address. The code shows on the machine's screen and serial
 * console (and goes over the network only when net.to names one host: a
 * broadcast would show it to every host on the LAN); net.keys=off
 * refuses every key. The dump protocol's datagrams ("BT1 R", and "A"
 * with a valid tag) go to the handler recorder/dumpnet.c sets; "A"
 * without one is refused and counted. */
#ifndef NET_NETCON_H
#define NET_NETCON_H
#include <stdbool.h>
#include <stdint.h>
#include "firmware/cmdline.h"
#include "net/netproto.h"

/* After net_init: the sink, the session code (from random); boot_nonce
 * is the boot's nonce (recorder/dumpid.h), which signed datagrams bind. */
void netcon_init(const struct boot_config *cfg, uint64_t random, uint64_t boot_nonce);
/* The READY line (without "\n"): announced as "BT1 I" now, then every
 * 5 s while no dump is in progress, and to whoever asks with "BT1 Q". */
void netcon_set_ready(const char *line);
/* The next key from the host, or -1; polls the network first (keys CPU). */
int netcon_getc(void);
/* Called with the net lock held for each RESEND or (signed, valid) DONE
 * datagram. Set while a dump is in progress, NULL otherwise: no
 * announcements meanwhile. */
void netcon_set_dump_handler(void (*fn)(const struct netmsg *m));
/* With the net lock held: the console text kept from before the network
 * was up, sent now (a dump sends it first, so the host has the text
 * before the dump, the session code line among it when net.to names it). */
void netcon_send_backlog(void);
/* One line for `s`: the interface, its address and counters, keys refused. */
void netcon_print_stats(void);
/* A host has spoken the protocol since boot (it will confirm dumps). */
bool netcon_host_seen(void);

#endif
