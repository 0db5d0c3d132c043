/* screen.h — the screen console: whatever display GRUB handed over (a
 * direct-colour framebuffer at 32, 24 or 16 bpp, or EGA text) shows a
 * status area (status.h) on its top rows and, below it, the newest lines
 * of everything the console printed.
 *
 * Where drawing happens (and where it never does):
 * - screen_write() (console.c's write path, under the console lock) only
 *   copies characters into the screen's text buffer: a few stores per
 *   byte, no pixel, no scrolling, no lock of its own.
 * - screen_poll() draws: it compares the wanted text with what is on the
 *   glass and redraws only the cells that differ. It is called from the
 *   boot CPU's idle loop (main.c, interrupts on, so the timer tick is never
 *   held up) and from the dump's line sink (status.h) while a dump keeps
 *   the boot CPU busy; it draws at most SCREEN_HZ times a second and gives
 *   way (returns at once) if another CPU is drawing. Never from an
 *   interrupt handler, never on a trace path.
 * - Before the first screen_poll() (the boot, before the idle loop runs)
 *   screen_write() draws at once, so a boot that stops early shows why.
 *
 * Cost: the first poll times one full redraw and prints it once, e.g.
 * "screen: 1024x768 32 bpp, 128x48 cells; full redraw 2100000 TSC ticks". */
#ifndef SCREEN_H
#define SCREEN_H
#include <stdbool.h>
#include "mb2.h"

#define SCREEN_HZ          4          /* redraws per second, at most */
#define SCREEN_STATUS_ROWS 2

/* Take over the display GRUB described (nothing happens without one). A
 * framebuffer that cannot be mapped yet (above 4 GiB before the memory
 * allocator runs) is mapped at the first screen_poll(). */
void screen_init(const struct mb2_framebuffer *fb);
bool screen_present(void);
/* Append console text (printable ASCII, '\n', '\r', '\b'); cheap. */
void screen_write(const char *s, unsigned long n);
/* Redraw what changed, if a redraw is due. */
void screen_poll(void);
/* Redraw what changed now, due or not (unless another CPU is drawing):
 * for a path that never returns to the idle loop, e.g. an exception
 * report on the boot CPU just before it parks. */
void screen_flush(void);

#endif
