/* screen.h — the screen console: whatever display GRUB handed over (a
 * direct-colour framebuffer at 32, 24 or 16 bpp, or EGA text) shows a
 * status area on its top rows (their text is pushed by status.h) and,
 * below it, the newest lines of everything the console printed.
 *
 * Where drawing happens (and where it never does):
 * - screen_write() (a console sink: lib/kprintf.c's write path, under the console lock) only
 *   copies characters into the screen's text buffer: a few stores per
 *   byte, no pixel, no scrolling, no lock of its own.
 * - screen_poll() draws: it compares the wanted text with what is on the
 *   glass and redraws only the cells that differ. It is called from the
 *   boot CPU's idle loop (main.c, interrupts on, so the timer tick is never
 *   held up); screen_refresh() does the same from the dump's line sink
 *   (status.h) while a dump keeps the boot CPU busy. Both draw at most
 *   SCREEN_HZ times a second and give way (return at once) if another CPU
 *   is drawing. Never from an interrupt handler, never on a trace path.
 * - Until the first of these calls after boot, screen_write()
 *   draws at once (boot only), so a boot that stops early shows why.
 *
 * Cost: the first draw from the idle loop redraws every cell, timed, and
 * prints it once, e.g. "screen: 1024x768 32 bpp at 0xfd000000, 128x48
 * cells; full redraw 65719320 TSC ticks (32921 us)" (QEMU TCG). */
#ifndef CONSOLE_SCREEN_H
#define CONSOLE_SCREEN_H
#include <stdbool.h>
#include "firmware/mb2.h"

#define SCREEN_HZ          4          /* redraws per second, at most */
#define SCREEN_STATUS_ROWS 2

/* screen.mode=WxH was asked (grub.cfg sets GRUB's gfxpayload from it):
 * say whether the screen GRUB handed over has that size, and if not, what
 * it has and why that may be. */
void screen_check_mode(uint32_t width, uint32_t height);

/* Take over the display GRUB described; false (and nothing happens)
 * without one that can show text. A framebuffer that cannot be mapped yet
 * (above 4 GiB before the memory allocator runs) is mapped at the first
 * draw after boot. */
bool screen_init(const struct mb2_framebuffer *fb);
/* Once PCI is scanned: when the screen is not a console because there is
 * no display (no PCI display adapter; GRUB on BIOS still describes the
 * legacy window then) or because GRUB left an indexed-colour mode, say
 * which. */
void screen_report_adapter(bool display_adapter);
/* Append console text (printable ASCII, '\n', '\r', '\b'); cheap. */
void screen_write(const char *s, unsigned long n);
/* The idle loop's call: redraw what changed, if a redraw is due; the
 * first time, also print what the first full redraw cost. */
void screen_poll(void);
/* The same without printing anything (for the dump's progress). */
void screen_refresh(void);
/* Redraw what changed now, due or not: before a boot step that may take
 * long (USB setup), so that the screen shows it while it runs. */
void screen_flush(void);
/* A redraw would happen now (the last one is 1/SCREEN_HZ s old). */
bool screen_due(void);
/* Set status row `row` (< SCREEN_STATUS_ROWS) to text, cut to the screen's
 * width and padded with spaces; shown at the next redraw. */
void screen_set_status(unsigned row, const char *text);

#endif
