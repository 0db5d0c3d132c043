/* dumpnet.h — dumps over the network, with nothing lost.
 *
 * dump.c wraps its sink like dumpstick.h does: dumpnet_open() before the
 * dump, and dumpnet_close() after it, while the snapshot is still held.
 * The lines leave as "BT1 D" datagrams (net/netproto.h), several lines
 * each, numbered as the dump numbers them. Then the machine says "BT1 W"
 * (sent, waiting) until the host answers "BT1 A" (whole) or asks for
 * lines again ("BT1 R"): those are encoded again from the same snapshot
 * (the encoder is deterministic on rings that hold still) and sent. It
 * stops waiting when the host confirms, when no host answers for
 * DUMPNET_QUIET_US (DUMPNET_NO_HOST_US if no host ever spoke), or after
 * DUMPNET_WAIT_MAX_US, and says on the console what was not confirmed.
 * A fault's or an NMI's dump goes over the network too (net/net.h's
 * lock rules). */
#ifndef RECORDER_DUMPNET_H
#define RECORDER_DUMPNET_H
#include <stdbool.h>
#include "recorder/encode.h"

#define DUMPNET_QUIET_US    5000000ull
#define DUMPNET_NO_HOST_US  300000ull
#define DUMPNET_WAIT_MAX_US 60000000ull

/* DUMP_TO_* bits from cmdline.h; 0 = every transport present. */
void dumpnet_init(unsigned dump_to);
/* Whether a dump taken now would go over the network. */
bool dumpnet_would_take(void);
/* Wrap *sink: the lines also (or, with trace.dump_to=net alone, only) go
 * to the network. fault: a fault's or NMI's dump (takes the stack over
 * from a stopped CPU). False when the network takes no part. */
bool dumpnet_open(struct dump_sink *sink, const struct dump_meta *meta, bool fault);
/* After the dump: wait for the host, send again what it asks for. */
void dumpnet_close(const struct dump_meta *meta, struct ring *const rings[], unsigned n);

#endif
