/* kprintf.h — kernel text output, to every sink registered with it.
 *
 * The console owns no device: a driver that can show text (the UART,
 * serial.h; the screen, screen.h) is registered by kmain as a sink, and
 * every line goes to each sink in the order they were added. A sink that
 * takes a dump's encoded lines (CONSOLE_DUMP_LINES: a wire to the host)
 * also gets console_write_dump_locked()'s bytes; the others (the screen)
 * show the dump's progress instead (status.h).
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
#ifndef LIB_KPRINTF_H
#define LIB_KPRINTF_H
#include <stdbool.h>
#include <stdint.h>

#define CONSOLE_SINKS_MAX  4
#define CONSOLE_DUMP_LINES 1u         /* the sink carries dumps to the host */
/* CONSOLE_REPLAY: the sink first gets the text printed before it was added
 * (the boot's first CONSOLE_KEPT_BYTES). */
#define CONSOLE_REPLAY     2u
#define CONSOLE_KEPT_BYTES 16384

/* A sink's write: raw bytes (printable ASCII and '\n'), under the console
 * lock; it must not print, block without a bound or take another lock
 * that a printing CPU may hold. */
typedef void (*console_sink_fn)(const char *s, unsigned long n);

/* Whether the sink's device is there now (a UART that answered); NULL:
 * always. */
typedef bool (*console_present_fn)(void);

/* Add a sink (flags: CONSOLE_DUMP_LINES, CONSOLE_REPLAY, or 0). False,
 * and nothing added, when CONSOLE_SINKS_MAX are registered already. Boot
 * CPU, at boot. A sink added late (the network, once a NIC is found) with
 * CONSOLE_REPLAY still shows the boot from its first line; text past the
 * kept bytes is counted and the count said to it. */
bool console_add_sink(console_sink_fn write, console_present_fn present, unsigned flags);
/* Whether a sink that carries dumps has its device: a dump written now
 * would reach the host that way. */
bool console_dump_sink_present(void);

int kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void console_lock(void);
/* Take the console only if it is free (or already this CPU's): for code
 * that must not wait, such as an NMI handler. */
bool console_trylock(void);
void console_unlock(void);
/* Release the lock however deeply this CPU holds it (a fault that cut a
 * dump or a line short, before the CPU parks), leaving the interrupt flag
 * as it is; nothing if another CPU holds it. */
void console_unlock_all(void);
/* Write raw bytes; the caller holds the console lock. */
void console_write_locked(const char *s, unsigned long n);
/* A dump's encoded lines: to the sinks that carry dumps only. */
void console_write_dump_locked(const char *s, unsigned long n);

#endif
