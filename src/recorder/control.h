/* control.h — the verbs that change what is traced: on/off, clear, the
 * category mask. Keys (hotkey.c), the mask prompt and workloads call
 * these; each records what it did as an event (TRACE_ENABLE, TRACE_CLEAR)
 * and says it on the console.
 *
 * The mask word itself and its atomic switches are trace.h's; the pause
 * a clear needs is snapshot.h's. */
#ifndef RECORDER_CONTROL_H
#define RECORDER_CONTROL_H
#include <stdbool.h>
#include <stdint.h>

/* Tracing on or off (the ENABLE bit): TRACE_ENABLE events are recorded
 * while it is on, before switching off and after switching on. */
void control_toggle(void);

/* Every ring emptied and its loss counters zeroed, with tracing paused
 * and the rings quiescent; `also` (may be NULL) clears other counters in
 * the same pause (the timer statistics). Then a TRACE_CLEAR event. */
void control_clear(void (*also)(void));

/* The traced categories (bits 0..29), ENABLE unchanged; a TRACE_ENABLE
 * event, recorded before the change, carries the mask that takes effect. */
void control_set_categories(uint32_t cats);

#endif
