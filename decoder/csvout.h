/* csvout.h — CSV rows of the decoder's export, straight from records.
 *
 * Writes exactly what scripts/btlib/export_csv.py writes per event (after
 * the header line), byte for byte:
 *     cpu,seq,tsc,ns,type,name,flags,a0,a1,args\n
 * with ns = floor((tsc - t0) * 1e9 / hz) (exact, 128-bit), the type's
 * name already CSV-quoted by the caller, and args the named arguments
 * ("tick=12 lateness_tsc=-40"; a signed argument as the int64_t it
 * holds, a boot phase argument by its name when the phase table has it),
 * CSV-quoted when it holds , " CR or LF. */
#ifndef DECODER_CSVOUT_H
#define DECODER_CSVOUT_H
#include <stddef.h>
#include <stdint.h>
#include "trace/event.h"

#define BT_CSV_FIELDS   2
#define BT_CSV_ARGS_MAX 2048    /* one row's args text, before quoting */

/* How one event type is shown. */
struct bt_csv_type {
    const char *name;                       /* CSV-ready */
    const char *label[BT_CSV_FIELDS];       /* "tick=", " lateness_tsc=" */
    uint32_t nfields;
    uint8_t arg[BT_CSV_FIELDS];         /* 0: a0, 1: a1 */
    uint8_t phase[BT_CSV_FIELDS];       /* 1: show a phase name if known */
    uint8_t sgn[BT_CSV_FIELDS];         /* 1: the argument is an int64_t */
};

struct bt_phase {
    uint64_t value;
    const char *name;
};

/* The name of phase value v in phases[0..n), or NULL. */
const char *bt_phase_name(const struct bt_phase *phases, size_t n, uint64_t v);

struct bt_csv {
    const struct bt_csv_type *types;        /* indexed by type_index[type] */
    const uint16_t *type_index;             /* [65536] */
    const struct bt_phase *phases;
    size_t nphases;
    uint64_t t0, hz;                        /* hz > 0 */
    size_t row_max;                       /* bytes the longest row can take */
};

/* Formats rows for ev[0..n) into out[0..cap) until fewer than row_max
 * bytes are left; returns the bytes written, *done the events used.
 * cpu[0..n): each event's CPU number (a record keeps only its low 8
 * bits); NULL: the records' own. */
size_t bt_csv_rows(const struct bt_csv *c, const struct trace_event *ev, const uint32_t *cpu,
                   size_t n, char *out, size_t cap, size_t *done);

/* The args text of ev (type t) into p, unquoted ("tick=12 lateness_tsc=-40");
 * returns its end. Also the text export's (textout.c). */
char *bt_csv_args(const struct bt_csv *c, const struct bt_csv_type *t,
                  const struct trace_event *ev, char *p);

#endif
