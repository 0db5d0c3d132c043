/* streamnet.h — a stream's parts over the network (docs/streaming.md):
 * each part's lines kept, as encoded, until the host confirms them.
 *
 * STREAMNET_SLOTS parts at most are unconfirmed at a time. A part is
 * encoded once into a free slot's line buffer (streamnet_fill's sink),
 * then streamnet_poll, from the keys CPU's loop and never waiting, sends
 * its lines as "BT1 D" datagrams, a bounded number each call, then "BT1
 * W" every 200 ms; the host's "BT1 R" has the kept lines sent again (the
 * very same lines), its "BT1 A" frees the slot ("BT1 X ... 0" says so).
 * A host quiet for STREAMNET_QUIET_US (time with the link down, or with
 * a dump under way, not counted) has the part given up ("BT1 X" with
 * its lines) and the slot freed. Datagrams are sealed and requests
 * bounded as a dump's (netpack.h). */
#ifndef RECORDER_STREAMNET_H
#define RECORDER_STREAMNET_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "recorder/encode.h"

#define STREAMNET_SLOTS    2
#define STREAMNET_QUIET_US 5000000ull

/* Boot CPU: line buffers of `room` bytes for each slot; false (said on
 * the console) when memory cannot hold them. */
bool streamnet_init(size_t room);
size_t streamnet_room(void);
/* Start receiving the host's answers (a stream begins) or stop. */
void streamnet_listen(bool on);

/* A free slot for part `dump_no`: the sink the encoder writes its lines
 * to; NULL when every slot is taken. streamnet_queue() hands the
 * filled slot over to be sent. */
const struct dump_sink *streamnet_fill(uint64_t nonce, uint32_t dump_no);
void streamnet_queue(void);

/* Keys CPU, never waits: send, resend, W, free confirmed and given-up
 * slots. paused: a dump is under way (the host's quiet time stops). */
void streamnet_poll(bool paused);
/* Parts not yet confirmed (or given up). */
unsigned streamnet_unconfirmed(void);

struct streamnet_counts {
    uint64_t bytes;               /* of datagrams sent, resends included */
    uint64_t confirmed, given_up; /* parts */
    uint64_t resent;              /* lines sent again */
    uint64_t overflow;            /* lines that did not fit a slot (never: room) */
};
void streamnet_counts(struct streamnet_counts *c);

#endif
