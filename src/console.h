/* console.h — kernel text output: the serial console plus the screen
 * console (screen.h) when GRUB handed over a display.
 *
 * kprintf() formats a whole line into a buffer and writes it under the
 * console lock, so lines from different CPUs never interleave mid-line.
 * console_lock()/console_unlock() let a caller (the dump) hold the console
 * across many writes; a CPU that faults while holding it still prints.
 * Taking the console never disables interrupts: the holder keeps taking
 * its timer and UART interrupts through a dump of many seconds, and a CPU
 * waiting for it spins with its interrupts as they were (enabled in all
 * code that prints outside a fault). So interrupt handlers must never
 * print: on the holder's CPU their text would land inside the held block
 * (a handler with something to report counts it for later instead).
 * Exceptions are the one exception: they print, nested if need be. */
#ifndef CONSOLE_H
#define CONSOLE_H
#include <stdint.h>

int  kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void console_lock(void);
void console_unlock(void);
/* Release the lock however deeply this CPU holds it (a fault that cut a
 * dump or a line short, before the CPU parks), leaving the interrupt flag
 * as it is; nothing if another CPU holds it. */
void console_unlock_all(void);
/* Write raw bytes; the caller holds the console lock. */
void console_write_locked(const char *s, unsigned long n);
/* The same to the UART only: a dump's encoded lines, whose progress the
 * screen shows instead (status.h). */
void console_write_uart_locked(const char *s, unsigned long n);

#endif
