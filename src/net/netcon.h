/* netcon.h — the console over the network, both ways.
 *
 * Out: a console sink (lib/kprintf.h) that sends every console line to
 * net.to as a "BT1 T" datagram (net/netproto.h). In: keys from the host
 * ("BT1 K"), taken only with this boot's session code, which the machine
 * shows on its screen and serial console (and sends over the network
 * only when net.to names one host: a broadcast would show it to every
 * host on the LAN); net.keys=off refuses them all. The dump protocol's
 * datagrams ("BT1 R", "A", "H") go to the handler recorder/dumpnet.c
 * sets. */
#ifndef NET_NETCON_H
#define NET_NETCON_H
#include <stdbool.h>
#include <stdint.h>
#include "firmware/cmdline.h"
#include "net/netproto.h"

/* After net_init: the sink, the session code (from random). */
void netcon_init(const struct boot_config *cfg, uint64_t random);
/* The next key from the host, or -1; polls the network first (keys CPU). */
int  netcon_getc(void);
/* Called with the net lock held for each RESEND, DONE or HELLO datagram. */
void netcon_set_dump_handler(void (*fn)(const struct netmsg *m));
/* One line for `s`: the interface, its address and counters, keys refused. */
void netcon_print_stats(void);
/* A host has spoken the protocol since boot (it will confirm dumps). */
bool netcon_host_seen(void);

#endif
