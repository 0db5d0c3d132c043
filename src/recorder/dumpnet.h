/* dumpnet.h — dumps over the network, with nothing lost.
 *
 * dump.c sends a dump over the network first, at the network's own
 * speed, then (unless trace.dump_to=net alone) to the serial console and
 * the stick, encoded again from the same snapshot: the encoder is
 * deterministic on rings that hold still, so every transport gets the
 * same lines, and the network never waits for a 115200-baud line.
 * dumpnet_open() takes the network stack, dumpnet_send() streams the
 * lines as "BT1 D" datagrams (net/netproto.h), several lines each,
 * numbered as the dump numbers them, and dumpnet_close(), with the
 * snapshot still held, says "BT1 W" (sent, waiting) until the host
 * answers "BT1 A" (whole) or asks for lines again ("BT1 R"): those are
 * encoded again and sent. It stops waiting when the host confirms, when
 * no host answers for DUMPNET_QUIET_US (DUMPNET_NO_HOST_US, or
 * DUMPNET_NO_HOST_RARE_US for a fault's or an NMI's dump, while no host
 * has ever spoken: any host's first word, such as capture's H to the
 * dump's first datagram, starts the full wait again), or after
 * DUMPNET_WAIT_MAX_US, and says on the console
 * what was not confirmed. A fault's or an NMI's dump goes over the
 * network too (net/net.h's lock rules). */
#ifndef RECORDER_DUMPNET_H
#define RECORDER_DUMPNET_H
#include <stdbool.h>
#include "recorder/encode.h"

#define DUMPNET_ADDRESS_WAIT_US 4000000ull   /* link up, no address yet: wait (DHCP's fallback comes at 3 s) */
#define DUMPNET_QUIET_US        5000000ull
#define DUMPNET_NO_HOST_US      300000ull
/* The same for a fault's or an NMI's dump: rare, and often the one the
 * user most wants (a fault during boot comes before any host spoke). */
#define DUMPNET_NO_HOST_RARE_US 2000000ull
#define DUMPNET_WAIT_MAX_US     60000000ull

/* DUMP_TO_* bits from cmdline.h; 0 = every transport present. */
void dumpnet_init(unsigned dump_to);
/* Whether a dump taken now would go over the network (a link: an
 * address may still be coming, dumpnet_open waits for it). */
bool dumpnet_would_take(void);
/* trace.dump_to=net alone: no other transport gets dumps. */
bool dumpnet_only(void);
/* Who asks: a key (or timer, workload), an NMI (the CPU returns to what
 * it interrupted afterwards), a fault (the CPU parks afterwards). */
enum dumpnet_cause { DUMPNET_KEY,
                     DUMPNET_NMI,
                     DUMPNET_FAULT };
/* Take the network for a dump with this id. A fault's dump takes the
 * stack over from a CPU that stopped holding it (itself included); an
 * NMI's waits for another CPU's hold to end but skips the network when
 * it interrupted the stack itself. False (said on the console when it
 * matters) when the network takes no part. */
bool dumpnet_open(const struct dump_meta *meta, enum dumpnet_cause cause);
/* Send the dump; returns its events. progress: the screen's, when the
 * network is the only transport (else the serial pass reports). */
uint64_t dumpnet_send(const struct dump_meta *meta, struct ring *const rings[], unsigned n,
                      void (*progress)(const struct dump_progress *p));
/* After dumpnet_send: wait for the host, send again what it asks for;
 * gives the network back. */
void dumpnet_close(const struct dump_meta *meta, struct ring *const rings[], unsigned n);

#endif
