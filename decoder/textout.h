/* textout.h — the decoder's text timeline rows, straight from records.
 *
 * Writes exactly what scripts/btlib/export_text.py writes per event (after
 * its two header lines), byte for byte:
 *     "%*lld.%03d  %*u  " time (us since t0, floor ns) and CPU, then the
 *     type's head (its name padded to the name column and two spaces when
 *     arguments follow, else the bare name), the args as csvout.h
 *     bt_csv_args() writes them, and "\n";
 * and, around an event whose (cpu, seq) has a marker, the marker's line:
 * the same time and CPU, then the marker's text ("*LOST*  events=N
 * first_seq=S cause=C\n", made by the caller). */
#ifndef DECODER_TEXTOUT_H
#define DECODER_TEXTOUT_H
#include <stddef.h>
#include <stdint.h>
#include "decoder/csvout.h"
#include "trace/event.h"

/* A hole marker shown before and/or after the event (cpu, seq). */
struct bt_marker {
    uint64_t cpu, seq;
    const char *before, *after;             /* NULL: none on that side */
};

struct bt_text {
    const struct bt_csv *table;             /* types' name = their head */
    const struct bt_marker *markers;        /* sorted by (cpu, seq), unique */
    size_t nmarkers;
    uint32_t int_w;                         /* width of the whole-us part */
    uint32_t cpu_w;                         /* width of the CPU column */
    size_t row_max;                       /* bytes the longest event's lines take */
};

/* Formats the lines of ev[0..n) into out[0..cap) until fewer than row_max
 * bytes are left; returns the bytes written, *done the events used.
 * cpu[0..n): each event's CPU number (as csvout.h); NULL: the records'. */
size_t bt_text_rows(const struct bt_text *x, const struct trace_event *ev, const uint32_t *cpu,
                    size_t n, char *out, size_t cap, size_t *done);

#endif
