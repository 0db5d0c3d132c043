/* serial.h — 16550 UART driver for the console port (COM1 by default).
 *
 * serial_init() probes the port first (scratch register and LSR != 0xFF):
 * a missing port reads 0xFF everywhere, which would otherwise look like an
 * endless stream of received bytes. When no port answers, output is dropped
 * and serial_getc() reports nothing. Transmit polls LSR.THRE before every
 * byte with a bounded wait; after one timeout, bytes are dropped (and
 * counted) without waiting until the line drains: never a hang. */
#ifndef SERIAL_H
#define SERIAL_H
#include <stdbool.h>
#include <stdint.h>

#define SERIAL_DEFAULT_BAUD 115200

/* Select and program port `index` (0 = COM1 .. 3 = COM4) at `baud`.
 * Returns false when nothing answers at that port. */
bool serial_init(unsigned index, uint32_t baud);
bool serial_present(void);

void serial_putc(char c);
void serial_write(const char *s, unsigned long n);

/* Next received byte, or -1 when none is waiting. Boot CPU only. */
int serial_getc(void);

/* Receive by interrupt at `vector` from now on (the caller routes the
 * port's ISA IRQ there, see serial_isa_irq). Without it input is polled
 * whenever serial_getc() is called; with it a burst between two polls is
 * kept in a 512-byte buffer instead of overrunning the 16-byte FIFO. */
bool     serial_irq_enable(uint8_t vector);
uint8_t  serial_isa_irq(void);
uint64_t serial_irqs(void);          /* receive interrupts taken */

/* Receiver overrun errors seen (LSR.OE): bytes lost before we read them. */
uint64_t serial_overruns(void);
/* Bytes not sent because the transmitter stopped draining. */
uint64_t serial_tx_dropped(void);

#endif
