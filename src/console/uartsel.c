/* uartsel.c — find the UARTs the machine describes and open the console. */
#include "console/uartsel.h"
#include "console/serial.h"
#include "console/spcr.h"
#include "console/uartpci.h"
#include "dev/pci.h"
#include "firmware/acpi.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "mm/mem.h"
#include "mm/mmio.h"

#define CLASS_COMM      0x07
#define SUBCLASS_SERIAL 0x00
#define UART_REGS       8

static const char *source = "";          /* where the console UART came from */

void uartsel_early(const struct boot_config *cfg)
{
    if (cfg->console_kind == CONSOLE_TTYS)
        serial_init(cfg->console_port, cfg->console_baud);
    else if (cfg->console_kind == CONSOLE_AUTO)
        serial_init(0, SERIAL_DEFAULT_BAUD);
}

/* Make an MMIO UART's registers reachable; false when they cannot be. */
static bool map(const struct uart_desc *u)
{
    return u->space != UART_MMIO ||
           mmio_map(u->base, (uint64_t)UART_REGS * u->stride, MMIO_UNCACHED);
}

/* Probe and take `u`, or say why not (quiet: a guess that found nothing
 * says nothing). */
static bool take_quietly(const struct uart_desc *u, const char *from, bool quiet)
{
    if (!map(u)) {
        kprintf("serial: %s (%s) skipped: its registers cannot be mapped\n", u->name, from);
        return false;
    }
    console_lock();
    bool ok = serial_open(u);
    console_unlock();
    if (!ok && !quiet)
        kprintf("serial: %s (%s) skipped: no 16550 answers there\n", u->name, from);
    else
        source = from;
    return ok;
}

static bool take(const struct uart_desc *u, const char *from)
{
    return take_quietly(u, from, false);
}

static bool try_spcr(void)
{
    const struct acpi_sdt *t = acpi_find("SPCR");
    struct uart_desc u;
    const char *note, *why;
    if (!t)
        return false;
    if (!spcr_parse((const uint8_t *)t, t->length, &u, &note, &why)) {
        kprintf("serial: ACPI SPCR skipped: %s\n", why);
        return false;
    }
    if (note)
        kprintf("serial: ACPI SPCR: %s\n", note);
    return take(&u, "ACPI SPCR");
}

static bool try_pci(const struct pci_func *f, unsigned port, uint32_t baud)
{
    struct pci_bar bars[UARTPCI_BARS];
    struct uart_desc u;
    const char *why;
    for (unsigned i = 0; i < UARTPCI_BARS; i++)
        if (!pci_bar(f, i, &bars[i]))
            bars[i] = (struct pci_bar){ 0 };
    if (!uartpci_choose(bars, f->bus, f->dev, f->fn, port, baud, &u, &why)) {
        kprintf("serial: pci:%02x:%02x.%x skipped: %s\n", f->bus, f->dev, f->fn, why);
        return false;
    }
    pci_enable(f, u.space == UART_IO ? PCI_CMD_IO : PCI_CMD_MEMORY);
    return take(&u, "PCI serial controller");
}

/* The first PCI UART that answers. */
static bool try_any_pci(uint32_t baud)
{
    const struct pci_func *f;
    for (unsigned n = 0; (f = pci_find_class(CLASS_COMM, SUBCLASS_SERIAL, -1, n)); n++)
        if (uartpci_class_ok(f->class, f->subclass, f->prog_if) && try_pci(f, 0, baud))
            return true;
    return false;
}

static bool try_legacy(unsigned index, uint32_t baud)
{
    struct uart_desc u = serial_legacy(index, baud);
    return take(&u, "legacy COM port");
}

/* COM2-COM4, after the rest: boards with only a COM2 header, or with COM1
 * off in setup. A port that is not there says nothing. */
static bool try_other_legacy(void)
{
    for (unsigned i = 1; i < SERIAL_LEGACY_PORTS; i++) {
        struct uart_desc u = serial_legacy(i, SERIAL_DEFAULT_BAUD);
        if (take_quietly(&u, "legacy COM port", true))
            return true;
    }
    return false;
}

static bool try_auto(void)
{
    return try_spcr() || try_legacy(0, SERIAL_DEFAULT_BAUD) ||
           try_any_pci(SERIAL_DEFAULT_BAUD) || try_other_legacy();
}

/* console= as given, for messages. */
static void describe(const struct boot_config *cfg, char *buf, size_t n)
{
    if (cfg->console_kind == CONSOLE_TTYS)
        ksnprintf(buf, n, "ttyS%u", cfg->console_port);
    else if (cfg->console_kind == CONSOLE_MMIO)
        ksnprintf(buf, n, "mmio,0x%lx", cfg->console_mmio);
    else if (cfg->console_pci_any)
        ksnprintf(buf, n, "pci");
    else if (cfg->console_pci_port)
        ksnprintf(buf, n, "pci:%02x:%02x.%x/%u", cfg->console_pci_bus, cfg->console_pci_dev,
                  cfg->console_pci_fn, cfg->console_pci_port);
    else
        ksnprintf(buf, n, "pci:%02x:%02x.%x", cfg->console_pci_bus, cfg->console_pci_dev,
                  cfg->console_pci_fn);
}

/* The UART console= names; *why says what is wrong when it is not one. */
static bool try_named(const struct boot_config *cfg, const char **why)
{
    const struct pci_func *f;
    struct uart_desc u = { .space = UART_MMIO, .width = 1, .stride = 1, .base = cfg->console_mmio, .baud = cfg->console_baud, .isa_irq = SERIAL_NO_IRQ };
    switch (cfg->console_kind) {
    case CONSOLE_TTYS:
        return try_legacy(cfg->console_port, cfg->console_baud);
    case CONSOLE_PCI:
        if (cfg->console_pci_any)
            return try_any_pci(cfg->console_baud);
        f = pci_find_bdf(cfg->console_pci_bus, cfg->console_pci_dev, cfg->console_pci_fn);
        return f && try_pci(f, cfg->console_pci_port, cfg->console_baud);
    default:
        /* RAM (the kernel, its rings, the kept trace) is never a UART: its
         * scratch register keeps what is written, so a probe would pass
         * and every console byte would land in memory. */
        if (mem_is_ram(u.base, UART_REGS)) {
            *why = "that is RAM in the memory map, not a UART";
            return false;
        }
        ksnprintf(u.name, sizeof u.name, "mmio:0x%lx", u.base);
        return take(&u, "console=mmio");
    }
}

void uartsel_choose(const struct boot_config *cfg)
{
    bool ok = false;
    const char *why = "no such UART answers";
    if (cfg->console_kind != CONSOLE_AUTO && !(ok = try_named(cfg, &why))) {
        char asked[40];
        describe(cfg, asked, sizeof asked);
        kprintf("cmdline: console=%s: %s; using auto\n", asked, why);
    }
    if (!ok)
        ok = try_auto();
    serial_settle();
    if (!ok) {
        kprintf("serial: no UART found (ACPI SPCR, COM1, PCI, COM2-COM4); console on screen only, "
                "keys from the keyboard\n");
        return;
    }
    kprintf("serial: console %s (%s)\n", serial_name(), source);
}
