/* console.h — kernel text output: the serial console plus the screen
 * console (screen.h) when GRUB handed over a display.
 *
 * kprintf() formats a whole line into a buffer and writes it under the
 * console lock, so lines from different CPUs never interleave mid-line.
 * console_lock()/console_unlock() let a caller (the dump) hold the console
 * across many writes; a CPU that faults while holding it still prints. */
#ifndef CONSOLE_H
#define CONSOLE_H
#include <stdint.h>

int  kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void console_lock(void);
void console_unlock(void);
/* Write raw bytes; the caller holds the console lock. */
void console_write_locked(const char *s, unsigned long n);
/* The same to the UART only: a dump's encoded lines, whose progress the
 * screen shows instead (status.h). */
void console_write_uart_locked(const char *s, unsigned long n);

#endif
