/* stream.h — a trace longer than the rings: every CPU's new events to the
 * host while the machine runs (trace.stream=net, the `n` key), as the
 * parts of a stream (docs/streaming.md).
 *
 * The consumer runs in the keys CPU's loop and never waits: every
 * STREAM_PART_US, or sooner when some CPU has filled half its ring since
 * the last part, it takes a part when fewer than STREAMNET_SLOTS are
 * unconfirmed: the encoder reads each ring behind its writer from where
 * the previous part stopped (ring_snap_begin_from; tracing is never
 * paused), into a kept line buffer that streamnet.h sends. While the
 * slots are full the consumer waits and the rings may wrap: that loss is
 * counted per CPU (overwritten before it was streamed). Part numbers are
 * dump numbers from the boot's one counter (dumpid.h).
 *
 * A dump pauses the stream (no part is taken or sent meanwhile, and the
 * host's quiet time stops); a fault's dump ends it: its final part goes
 * after the fault's dump. `c` is refused while a stream runs. */
#ifndef RECORDER_STREAM_H
#define RECORDER_STREAM_H
#include <stdbool.h>

#define STREAM_PART_US 100000ull

/* Boot CPU, after the APs are up and the network's sinks are set:
 * mode is CMDLINE_STREAM_* (trace.stream=; net starts a stream once the
 * network is up). */
void stream_init(unsigned mode);
/* The keys CPU, each pass of its loop: never waits. */
void stream_poll(void);
/* The `n` key: start a stream, or end the running one (its final part
 * follows). */
void stream_toggle(void);
/* A stream runs (or its final part is still on its way). */
bool stream_running(void);
/* One `stream:` line for `s`. */
void stream_print_stats(void);
/* dump.c, around every dump, on the dumping CPU. */
void stream_dump_started(void);
void stream_dump_ended(bool fault);
/* exception.c: a CPU faulted inside its own dump, which never ends: as
 * a fault's dump, it ends the stream (else the stream would stay paused
 * for a dump that is over). */
void stream_dump_abandoned(void);

#endif
