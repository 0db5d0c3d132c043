/* uartpci.c — PCI serial controllers (PCI Code and ID Assignment
 * Specification: class 07h, subclass 00h). */
#include "console/uartpci.h"
#include "lib/format.h"

#define CLASS_COMM         0x07
#define SUBCLASS_SERIAL    0x00
#define PROG_IF_16950      0x06        /* 0x00 8250 .. 0x06 16950 */
#define UART_REGS          8

bool uartpci_class_ok(uint8_t class, uint8_t subclass, uint8_t prog_if)
{
    return class == CLASS_COMM && subclass == SUBCLASS_SERIAL && prog_if <= PROG_IF_16950;
}

static int first_bar(const struct pci_bar bars[UARTPCI_BARS], bool io)
{
    for (int i = 0; i < UARTPCI_BARS; i++)
        if (bars[i].io == io && bars[i].base && bars[i].size >= UART_REGS)
            return i;
    return -1;
}

bool uartpci_choose(const struct pci_bar bars[UARTPCI_BARS], uint8_t bus, uint8_t dev,
                    uint8_t fn, uint32_t baud, struct uart_desc *out, const char **why)
{
    int i = first_bar(bars, true);
    if (i < 0)
        i = first_bar(bars, false);
    if (i < 0) {
        *why = "no I/O or memory BAR of 8 registers";
        return false;
    }
    *out = (struct uart_desc){ .space = bars[i].io ? UART_IO : UART_MMIO, .width = 1,
                               .stride = 1, .base = bars[i].base, .baud = baud,
                               .isa_irq = SERIAL_NO_IRQ };
    ksnprintf(out->name, sizeof out->name, "pci:%02x:%02x.%x", bus, dev, fn);
    return true;
}
