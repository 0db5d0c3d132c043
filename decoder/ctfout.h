/* ctfout.h — the CTF export's event records and shared stream files,
 * straight from records.
 *
 * scripts/btlib/export_ctf.py lays out each event of a stream packet as
 * struct.Struct('<QHIBQQ'): tsc timestamp, u16 id, u32 seq, u8 flags,
 * then the two 64-bit fields, 31 bytes, little-endian and unaligned
 * (its metadata declares every type byte-aligned). bt_ctf_events()
 * writes exactly those bytes for ev[0..n), in order, so Python cuts
 * packets out of one buffer instead of packing each event itself.
 *
 * A stream file that several CPUs share (past 256 CPUs), or a CPU whose
 * TSC went back, holds several segments (monotonic stretches of one
 * CPU's records) in TSC order: a packet per run of one segment's events.
 * bt_ctf_stream() writes those packets exactly as export_ctf's
 * _stream_packets does (which stays the reference): a min-heap of the
 * segments' next TSCs (ties: the segment given first); each run takes
 * its segment's events up to the next head's TSC; a packet ends at the
 * run's end, at a hole, or after BT_CTF_EVENTS_PER_PACKET events.
 * With `shared` set (a file several CPUs share: stream class 1, as
 * _shared_packets writes it) the events are those of the same runs, each
 * with its cpu_id in the event context (BT_CTF_SHARED_EVENT_SIZE), in
 * packets without cpu_id (BT_CTF_SHARED_CONTEXT_SIZE) of up to
 * BT_CTF_EVENTS_PER_PACKET events of any of the CPUs, each also ended by
 * a loss. */
#ifndef DECODER_CTFOUT_H
#define DECODER_CTFOUT_H
#include <stddef.h>
#include <stdint.h>
#include "trace/event.h"

#define BT_CTF_EVENT_SIZE          31
#define BT_CTF_HEADER_SIZE         24   /* u32 magic, u8 uuid[16], u32 stream_id */
#define BT_CTF_CONTEXT_SIZE        44   /* 5 x u64 (timestamps, sizes, discarded), u32 cpu_id */
#define BT_CTF_EVENTS_PER_PACKET   4096
#define BT_CTF_SHARED_EVENT_SIZE   35   /* u32 cpu_id after the event header */
#define BT_CTF_SHARED_CONTEXT_SIZE 40   /* 5 x u64, no cpu_id */

/* Writes n * BT_CTF_EVENT_SIZE bytes to out. */
void bt_ctf_events(const struct trace_event *ev, size_t n, uint8_t *out);

/* One segment: n records, TSCs non-decreasing, with its losses. */
struct bt_ctf_seg {
    const struct trace_event *ev;
    const uint64_t *cut_at;      /* ascending, each in (0, n): a hole before that event */
    const uint64_t *cut_n;       /* ... of this many events */
    uint64_t n, ncuts;
    uint64_t lead, tail;         /* events lost before its first event, after its last */
    uint64_t cpu;                /* its packets' cpu_id */
    uint64_t at, cut;            /* bt_ctf_stream's state: events written, holes passed */
};

/* The stream file so far: its packet header, its running
 * events_discarded and how many packets it has (none: a first packet
 * with a loss follows an empty one with 0, so readers see the step). */
struct bt_ctf_stream {
    uint8_t header[BT_CTF_HEADER_SIZE];
    uint64_t discarded, packets;
    uint64_t shared;             /* nonzero: stream class 1's packets */
};

/* The most bytes bt_ctf_stream() writes for these segments. */
size_t bt_ctf_stream_bound(const struct bt_ctf_seg *segs, size_t nsegs);
/* Writes the segments' packets to out and returns their size; heap:
 * room for nsegs indices. Every segment needs n > 0. */
size_t bt_ctf_stream(struct bt_ctf_stream *st, struct bt_ctf_seg *segs, size_t nsegs,
                     uint64_t *heap, uint8_t *out);

#endif
