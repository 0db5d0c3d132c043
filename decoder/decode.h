/* decode.h — the dump decoder's event-line core, compiled for the host.
 *
 * Built as build/host/libbtdecode.so (`make`) and loaded by
 * scripts/btlib/fastdecode.py with ctypes. It decodes "%E<base64>" lines
 * (docs/dump-format.md, "Event lines") with the kernel's own predictor
 * (src/recorder/predict.c) and CRC (src/lib/crc32.c), so the encoder and
 * the decoder share one definition of the prediction rules.
 *
 * Exactness contract: for every line it returns what the reference decoder
 * (scripts/btlib/dumpfmt.py, _decode_event_line) returns: the same events,
 * or BT_DAMAGED where that one rejects the line. The few inputs on which
 * 64-bit arithmetic could differ from Python's unbounded integers (a
 * varint over 64 bits, a '=' inside the base64 text) are not decoded here
 * but answered BT_PUNT: the caller hands that line to the reference
 * decoder. No valid dump ever produces them.
 *
 * Usage: lines are packed into one buffer, each ending in '\n':
 *     struct bt_run runs[R]; struct trace_event ev[E]; size_t used;
 *     size_t n = bt_decode_lines(buf, len, seed, runs, R, ev, E, &used);
 * decodes lines from the start of buf until R runs or E events would be
 * exceeded; *used is the bytes consumed, so call again at buf + *used.
 * Give E >= BT_EVENTS_PER_BYTE * longest line, else a line that cannot
 * fit an empty batch comes back BT_PUNT. */
#ifndef DECODER_DECODE_H
#define DECODER_DECODE_H
#include <stddef.h>
#include <stdint.h>
#include "trace/event.h"

#define BT_DAMAGED         (-1)          /* the line cannot be trusted: no events */
#define BT_PUNT            (-2)          /* decode this line with the reference decoder */
#define BT_LINE_MAX_CHARS  4096   /* longer lines (never sent) go to the reference */
/* Dense CPU numbers 0 .. BT_CPU_LIMIT - 1 (the kernel's ceiling,
 * docs/dump-format.md): a line naming a higher one is damaged. A record's
 * u8 cpu keeps the low 8 bits of the number; struct bt_run's cpu, and
 * whatever holds one CPU's records, has all of it. */
#define BT_CPU_LIMIT       1024

/* Every event takes at least one payload byte, and 4 base64 characters
 * carry 3 bytes: a line of n characters holds fewer than n events. */
#define BT_EVENTS_PER_BYTE 1

/* One event line: its header fields and where its events went. */
struct bt_run {
    uint64_t line, cpu, start, gap_over, gap_excl;
    int32_t status;             /* >= 0: events decoded; BT_DAMAGED; BT_PUNT */
    uint32_t first;              /* index in ev[] of its first event */
};

/* Decodes one "%E..." line of `len` bytes (no newline) with CRC seed
 * `seed` (0 for format v1) into run and ev[0..cap). Returns run->status. */
int32_t bt_decode_line(const uint8_t *text, size_t len, uint32_t seed,
                       struct bt_run *run, struct trace_event *ev, size_t cap);

/* Decodes newline-terminated lines (see the file comment). Returns the
 * number of runs written; *used is the bytes of buf they came from. */
size_t bt_decode_lines(const uint8_t *buf, size_t len, uint32_t seed,
                       struct bt_run *runs, size_t max_runs,
                       struct trace_event *ev, size_t max_events, size_t *used);

#endif
