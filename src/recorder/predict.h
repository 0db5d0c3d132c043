/* predict.h — how one event becomes a few bytes in a dump's event line.
 *
 * Each event is coded against a prediction made from the events before it
 * on the same line (docs/dump-format.md, "Event lines"): the type expected
 * to follow the previous one, the previous gap in TSC for this type, and
 * each argument's last value plus its last step. A header byte says which
 * predictions missed; only the misses follow, as varints (zigzag for
 * signed residuals). A periodic timer tick costs one or two bytes.
 *
 * The state restarts at every line (pred_reset), so each line decodes on
 * its own. Pure code: kernel and host build alike. */
#ifndef RECORDER_PREDICT_H
#define RECORDER_PREDICT_H
#include <stdint.h>
#include "trace/event.h"

#define EV_MAX_BYTES 34         /* header 1, type 3, flags 1, tsc 9, args 10+10 */

/* Event header byte. */
#define EV_TYPE      0x01        /* type differs from the prediction: varint follows */
#define EV_FLAGS     0x02        /* flags != 0: one byte follows */
#define EV_A0        0x04        /* a0 differs from the prediction: zigzag varint */
#define EV_A1        0x08        /* a1 likewise */
#define EV_TSC_SHIFT 4           /* bits 4-6: low 3 bits of the tsc residual */
#define EV_TSC_LOW   7
#define EV_TSC_MORE  0x80        /* the residual >> 3 follows as a varint */

#define PRED_SLOTS   16          /* per-type predictor state, by type % 16 */

/* Per-type prediction state. */
struct pred_slot {
    uint64_t gap;                /* tsc minus previous event's, last time */
    uint64_t a0, a0d, a1, a1d;   /* last args and their last deltas */
    uint16_t type, next;         /* whose slot; type that followed it */
    uint8_t used, has_next;
};

struct pred {
    struct pred_slot s[PRED_SLOTS];
    uint64_t tsc, a0;            /* previous event in this line */
    uint16_t prev_type;
    uint8_t have_prev;
};

/* Writes v as a little-endian base-128 varint; returns its length (<= 10). */
unsigned varint_put(uint8_t *p, uint64_t v);
/* Signed residual (a wrapped u64) to unsigned: 0, -1, 1, -2 -> 0, 1, 2, 3. */
uint64_t zigzag(uint64_t d);
/* Forget everything: a new line starting at `tsc`. */
void pred_reset(struct pred *p, uint64_t tsc);
/* Code ev against the predictions into out (<= EV_MAX_BYTES bytes); p is
 * not changed: commit with pred_update once the bytes fit the line. */
unsigned pred_encode(const struct pred *p, const struct trace_event *ev, uint8_t *out);
void pred_update(struct pred *p, const struct trace_event *ev);

#endif
