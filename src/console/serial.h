/* serial.h — 16550 UART driver for the console port, over I/O ports or
 * MMIO (legacy COM1-4, a UART the ACPI SPCR table describes, a PCI serial
 * card; uartsel.h decides which).
 *
 * serial_open() probes the UART first (scratch register and LSR != 0xFF):
 * a missing port reads 0xFF everywhere, which would otherwise look like an
 * endless stream of received bytes. When no UART answers, output is
 * dropped and serial_getc() reports nothing. Transmit polls LSR.THRE
 * before every byte with a bounded wait; after one timeout, bytes are
 * dropped (and counted) without waiting until the line drains: never a
 * hang.
 *
 * Until serial_settle() the output is also kept (the first
 * SERIAL_EARLY_BYTES) so that the UART finally chosen, found only after
 * ACPI and PCI are up, still receives the boot messages printed before. */
#ifndef CONSOLE_SERIAL_H
#define CONSOLE_SERIAL_H
#include <stdbool.h>
#include <stdint.h>

#define SERIAL_DEFAULT_BAUD 115200
#define SERIAL_LEGACY_PORTS 4           /* COM1-COM4 */
#define SERIAL_NO_IRQ       0xFF
#define SERIAL_NAME_LEN     24
#define SERIAL_EARLY_BYTES  4096

enum uart_space { UART_IO,
                  UART_MMIO };

/* Where a 16550's registers are and how to program it. Register r (0..7)
 * lives at base + r * stride and is accessed `width` bytes wide, its 8
 * bits starting at bit `shift` of that access (ACPI GAS: access size and
 * register bit offset). */
struct uart_desc {
    uint8_t space;                   /* enum uart_space */
    uint8_t width;                   /* 1, 2 or 4 */
    uint8_t stride;                  /* 1, 2 or 4 */
    uint8_t shift;                   /* 0, 8, 16 or 24 */
    uint64_t base;                    /* I/O port or physical address */
    uint32_t baud;                    /* 0: keep the divisor the firmware set */
    uint32_t clock;                   /* input clock in Hz; 0: 1.8432 MHz */
    uint8_t isa_irq;                 /* SERIAL_NO_IRQ: input is polled */
    char name[SERIAL_NAME_LEN];   /* "ttyS0", "pci:00:03.0", "mmio:0x..." */
};

/* The legacy COM port `index` (0 = COM1 .. 3 = COM4) at `baud`. */
struct uart_desc serial_legacy(unsigned index, uint32_t baud);

/* Probe and program `u` (an MMIO one must already be mapped); on success
 * it becomes the console UART. Returns false, changing nothing, when
 * nothing answers there. */
bool serial_open(const struct uart_desc *u);
/* Shorthand: serial_open(serial_legacy(index, baud)). */
bool serial_init(unsigned index, uint32_t baud);
/* Stop keeping early output; if the console UART is not the one that
 * printed it live, send it the kept boot messages first. */
void serial_settle(void);

bool serial_present(void);
/* The console UART's name ("none" without one). */
const char *serial_name(void);

void serial_putc(char c);
void serial_write(const char *s, unsigned long n);

/* Next received byte, or -1 when none is waiting. Boot CPU only. */
int serial_getc(void);

/* Receive by interrupt at `vector` from now on (the caller routes the
 * port's ISA IRQ there, see serial_isa_irq). Without it input is polled
 * whenever serial_getc() is called; with it a burst between two polls is
 * kept in a 512-byte buffer instead of overrunning the 16-byte FIFO. */
bool serial_irq_enable(uint8_t vector);
uint8_t serial_isa_irq(void);        /* SERIAL_NO_IRQ for PCI and MMIO UARTs */
uint64_t serial_irqs(void);           /* receive interrupts taken */

/* Receiver overrun errors seen (LSR.OE): bytes lost before we read them. */
uint64_t serial_overruns(void);
/* Bytes not sent because the transmitter stopped draining. */
uint64_t serial_tx_dropped(void);

#endif
