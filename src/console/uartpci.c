/* uartpci.c — PCI serial controllers (PCI Code and ID Assignment
 * Specification: class 07h, subclass 00h). */
#include "console/uartpci.h"
#include "lib/format.h"

#define CLASS_COMM      0x07
#define SUBCLASS_SERIAL 0x00
#define PROG_IF_16950   0x06        /* 0x00 8250 .. 0x06 16950 */
#define UART_REGS       8

bool uartpci_class_ok(uint8_t class, uint8_t subclass, uint8_t prog_if)
{
    return class == CLASS_COMM && subclass == SUBCLASS_SERIAL && prog_if <= PROG_IF_16950;
}

/* The index of the nth BAR of that kind with 8 registers or more, or -1. */
static int nth_bar(const struct pci_bar bars[UARTPCI_BARS], bool io, unsigned n)
{
    for (int i = 0; i < UARTPCI_BARS; i++)
        if (bars[i].io == io && bars[i].base && bars[i].size >= UART_REGS && !n--)
            return i;
    return -1;
}

bool uartpci_choose(const struct pci_bar bars[UARTPCI_BARS], uint8_t bus, uint8_t dev,
                    uint8_t fn, unsigned port, uint32_t baud, struct uart_desc *out,
                    const char **why)
{
    bool io = nth_bar(bars, true, 0) >= 0;
    int i = nth_bar(bars, io, 0);
    if (i < 0) {
        *why = "no I/O or memory BAR of 8 registers";
        return false;
    }
    uint64_t base = bars[i].base + (uint64_t)port * UART_REGS;   /* ports packed in one BAR */
    if (bars[i].size < (uint64_t)(port + 1) * UART_REGS) {
        i = nth_bar(bars, io, port);                             /* one BAR per port */
        if (i < 0) {
            *why = "the card has no such port";
            return false;
        }
        base = bars[i].base;
    }
    *out = (struct uart_desc){ .space = io ? UART_IO : UART_MMIO, .width = 1, .stride = 1, .base = base, .baud = baud, .isa_irq = SERIAL_NO_IRQ };
    if (port)
        ksnprintf(out->name, sizeof out->name, "pci:%02x:%02x.%x/%u", bus, dev, fn, port);
    else
        ksnprintf(out->name, sizeof out->name, "pci:%02x:%02x.%x", bus, dev, fn);
    return true;
}
