/* summary.h — the `s` hotkey: uptime, CPUs, TSC rate, per-CPU ring
 * counters and event rates, events held per type, and the always-on
 * timer statistics (handler cost and lateness, min/avg/max TSC ticks). */
#ifndef PERF_SUMMARY_H
#define PERF_SUMMARY_H
#include <stdbool.h>
#include <stdint.h>

/* Past CPUSUM_TABLE_MAX CPUs, `s` prints the summary form (cpusum.h:
 * totals, min, median and max over the CPUs, the worst CPUs by name)
 * instead of a row per CPU, which would not fit the screen; `full` (`S`)
 * asks for the table anyway. */

/* ignored_keys: input bytes that named no command (hotkey.h). */
/* ignored_keys: keys that named no command; usb_keys_dropped: USB key
 * presses lost to a full key queue (both counted by the key path). */
void summary_print(uint64_t ignored_keys, uint64_t usb_keys_dropped, bool full);

#endif
