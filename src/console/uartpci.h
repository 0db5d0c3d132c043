/* uartpci.h — which PCI functions are 16550 UARTs, and where their
 * registers are.
 *
 * A serial controller is class 07 subclass 00; programming interfaces 0-6
 * (8250, 16450, 16550, 16650, 16750, 16850, 16950) all keep the 16550's
 * register layout. The registers are the first I/O BAR of at least 8
 * ports, else the first memory BAR of at least 8 bytes, one byte per
 * register (as Intel AMT serial-over-LAN and QEMU's pci-serial have them).
 * Cards that put the UART at an offset inside a BAR, or clock it other
 * than at 1.8432 MHz, need their own quirks and are not handled. Pure
 * code (host-tested); the caller reads the BARs. */
#ifndef CONSOLE_UARTPCI_H
#define CONSOLE_UARTPCI_H
#include <stdbool.h>
#include <stdint.h>
#include "console/serial.h"
#include "dev/pci.h"

#define UARTPCI_BARS 6

bool uartpci_class_ok(uint8_t class, uint8_t subclass, uint8_t prog_if);

/* From the function's decoded BARs (size 0: unimplemented or unusable),
 * UART `port` at bus:dev.fn as `out` (name "pci:BB:DD.F", "pci:BB:DD.F/N"
 * for port N > 0; polled input). Port N of a multi-port card is the Nth
 * block of 8 registers of the UART BAR when that BAR holds N + 1 of them
 * (QEMU's pci-serial-2x/4x, many Oxford and MosChip cards), else the
 * Nth BAR of 8 registers or more (one BAR per port). False, with `*why`,
 * when no BAR fits. */
bool uartpci_choose(const struct pci_bar bars[UARTPCI_BARS], uint8_t bus, uint8_t dev,
                    uint8_t fn, unsigned port, uint32_t baud, struct uart_desc *out,
                    const char **why);

#endif
