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
 * Status sits above the screen and pushes the rows to it (screen.h): the
 * idle loop calls status_poll(), and the dump (recorder/dump.c) reports where
 * it stands after every line through status_dump_progress(): the screen
 * shows the dump's progress, the wire carries its lines. */
#ifndef CONSOLE_STATUS_H
#define CONSOLE_STATUS_H
#include <stdbool.h>
#include <stdint.h>

/* Words shown at the end of the first row from now on (the network's
 * session code: net/netcon.h); copied, at most 31 characters. */
void status_set_note(const char *note);
/* Compose both rows and hand them to the screen (no drawing). */
void status_update(void);
/* The idle loop's call: status_update(), then let the screen redraw. */
void status_poll(void);
/* A dump was asked for with no UART, no network and no stick to take it (the
 * `nowhere`th time): the row says so instead of a progress. */
void status_dump_nowhere(uint32_t nowhere);
/* Where the dump now streaming goes, for its progress row ("over the
 * network", "on the UART", "to the stick", ...; a constant string). */
void status_dump_route(const char *where);
/* A dump sent a line: where it stands (every CPU may call this while it
 * holds the console lock); may redraw. */
void status_dump_progress(uint32_t dump_no, uint64_t lines, uint64_t events_sent,
                          uint64_t events_total, bool done);
/* USB is starting: what it does now ("usb: 00:1d.7 ehci: port 3"), shown
 * on the second row instead of the dump's and drawn at once (even within
 * 1/SCREEN_HZ of the last redraw); NULL when it is done (boot CPU,
 * before the APs). */
void status_usb(const char *text);

#endif
