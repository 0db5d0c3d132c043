/* test_uartpci.c — PCI serial controllers: class check and BAR choice. */
#include <string.h>
#include "check.h"
#include "console/uartpci.h"

static void test_class(void)
{
    CHECK(uartpci_class_ok(0x07, 0x00, 0x02));          /* 16550 (QEMU pci-serial, AMT SOL) */
    CHECK(uartpci_class_ok(0x07, 0x00, 0x00));          /* 8250 */
    CHECK(uartpci_class_ok(0x07, 0x00, 0x06));          /* 16950 */
    CHECK(!uartpci_class_ok(0x07, 0x00, 0x07));
    CHECK(!uartpci_class_ok(0x07, 0x01, 0x02));         /* parallel port */
    CHECK(!uartpci_class_ok(0x0C, 0x03, 0x30));         /* xHCI */
}

static void test_io_bar_first(void)
{
    struct pci_bar bars[UARTPCI_BARS] = { 0 };
    struct uart_desc u;
    const char *why = NULL;
    bars[0] = (struct pci_bar){ .base = 0xFEBC0000ull, .size = 4096 };
    bars[1] = (struct pci_bar){ .base = 0xC000, .size = 4, .io = true };    /* too small */
    bars[2] = (struct pci_bar){ .base = 0xC040, .size = 8, .io = true };
    CHECK(uartpci_choose(bars, 0x00, 0x03, 0, 0, 115200, &u, &why));
    CHECK_EQ(u.space, UART_IO);
    CHECK_EQ(u.base, 0xC040);
    CHECK_EQ(u.stride, 1);
    CHECK_EQ(u.width, 1);
    CHECK_EQ(u.baud, 115200);
    CHECK_EQ(u.isa_irq, SERIAL_NO_IRQ);
    CHECK(!strcmp(u.name, "pci:00:03.0"));
}

static void test_mmio_bar(void)
{
    struct pci_bar bars[UARTPCI_BARS] = { 0 };
    struct uart_desc u;
    const char *why = NULL;
    bars[0] = (struct pci_bar){ .base = 0, .size = 4096 };                  /* unassigned */
    bars[2] = (struct pci_bar){ .base = 0x4000000000ull, .size = 4096, .prefetchable = true };
    CHECK(uartpci_choose(bars, 0x1f, 0x1c, 7, 0, 9600, &u, &why));
    CHECK_EQ(u.space, UART_MMIO);
    CHECK_EQ(u.base, 0x4000000000ull);
    CHECK_EQ(u.stride, 1);
    CHECK(!strcmp(u.name, "pci:1f:1c.7"));
}

static void test_nothing_fits(void)
{
    struct pci_bar bars[UARTPCI_BARS] = { 0 };
    struct uart_desc u;
    const char *why = NULL;
    CHECK(!uartpci_choose(bars, 1, 0, 0, 0, 115200, &u, &why));
    CHECK(why && strstr(why, "BAR"));
    bars[0] = (struct pci_bar){ .base = 0xC000, .size = 0, .io = true };
    CHECK(!uartpci_choose(bars, 1, 0, 0, 0, 115200, &u, &why));
}

/* Port N of a multi-port card (console=pci:BB:DD.F/N). */
static void test_ports(void)
{
    struct pci_bar bars[UARTPCI_BARS] = { 0 };
    struct uart_desc u;
    const char *why = NULL;
    /* One I/O BAR of 4 x 8 registers: QEMU's pci-serial-4x, many cards. */
    bars[0] = (struct pci_bar){ .base = 0xC000, .size = 32, .io = true };
    CHECK(uartpci_choose(bars, 0, 4, 0, 2, 115200, &u, &why));
    CHECK_EQ(u.base, 0xC010);
    CHECK(!strcmp(u.name, "pci:00:04.0/2"));
    CHECK(uartpci_choose(bars, 0, 4, 0, 0, 115200, &u, &why));
    CHECK_EQ(u.base, 0xC000);
    CHECK(!strcmp(u.name, "pci:00:04.0"));     /* port 0 keeps the old name */
    CHECK(!uartpci_choose(bars, 0, 4, 0, 4, 115200, &u, &why));
    CHECK(why && strstr(why, "no such port"));
    /* One BAR per port. */
    memset(bars, 0, sizeof bars);
    bars[0] = (struct pci_bar){ .base = 0xC000, .size = 8, .io = true };
    bars[1] = (struct pci_bar){ .base = 0xFEB00000ull, .size = 4096 };
    bars[2] = (struct pci_bar){ .base = 0xC100, .size = 8, .io = true };
    CHECK(uartpci_choose(bars, 0, 5, 1, 1, 9600, &u, &why));
    CHECK_EQ(u.space, UART_IO);
    CHECK_EQ(u.base, 0xC100);
    CHECK(!strcmp(u.name, "pci:00:05.1/1"));
    CHECK(!uartpci_choose(bars, 0, 5, 1, 2, 9600, &u, &why));
}

int main(void)
{
    test_class();
    test_io_bar_first();
    test_mmio_bar();
    test_nothing_fits();
    test_ports();
    return check_summary("test_uartpci");
}
