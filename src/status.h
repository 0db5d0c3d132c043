/* status.h — the screen's status area (SCREEN_STATUS_ROWS rows on top),
 * in the spirit of memtest86+'s header: what the machine is doing now.
 *
 *   baretrace  cpus 4  up 0:01:23  tracing on  events 123456  overwritten 0
 *   dump 2: sending, 1234 lines, 40% of 65536 events   (or the last dump)
 *
 * Counters come from the rings' own head/base words, read without a pause
 * (a few loads per CPU, a few times a second; slightly stale is fine).
 * overwritten is recorded minus ring capacity: what a dump now would lack.
 *
 * The dump's line sink (trace/dump.c) hands every encoded line to
 * status_dump_line() instead of the screen: the screen shows the dump's
 * progress, the UART carries its lines. */
#ifndef STATUS_H
#define STATUS_H
#include <stdint.h>

/* Where the header's event counts come from (kmain installs
 * rings_event_counts: status sits below trace/, so it is handed the
 * function instead of calling up). Until then the counts show 0. */
void status_set_counter(void (*counts)(uint64_t *recorded, uint64_t *overwritten));
/* Fill row0 and row1 (cols characters each, space-padded, no NUL). */
void status_compose(char *row0, char *row1, unsigned cols);
/* One encoded dump line was sent (DUMP BEGIN ... DUMP END); may redraw. */
void status_dump_line(const char *s, unsigned long n);

#endif
