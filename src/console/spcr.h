/* spcr.h — the ACPI Serial Port Console Redirection table (Microsoft's
 * SPCR specification, revisions 1-4): which UART the firmware itself used
 * as its console, where its registers are and at what speed.
 *
 * Only 16550-compatible UARTs are taken (interface types 0 "full 16550",
 * 1 "16450 subset" and 0x12 "16550 with its register layout in the GAS"),
 * in I/O or memory space. The GAS's access size gives the register width
 * and stride (byte, word or dword registers), its bit offset where the 8
 * register bits sit. Pure code (host-tested). */
#ifndef CONSOLE_SPCR_H
#define CONSOLE_SPCR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "console/serial.h"

/* The standard Configured Baud Rate codes: 0 keeps the firmware's rate. */
#define SPCR_BAUD_AS_IS 0

/* Parse the table at `t` (`len` bytes, header included). On success `out`
 * describes the UART (name "io:0x..." or "mmio:0x...", or "ttySn" when it
 * sits at a legacy COM port, baud 0 when the firmware's rate is to be
 * kept) and `*note` is NULL or names a field that was ignored. On failure
 * `*why` says why (for a console line). */
bool spcr_parse(const uint8_t *t, size_t len, struct uart_desc *out,
                const char **note, const char **why);

#endif
