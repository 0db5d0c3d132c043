/* uartsel.h — which UART becomes the console, as console= asks.
 *
 * Sources: the ACPI SPCR table (the UART the firmware itself used), PCI
 * serial controllers (class 07/00, see uartpci.h) and the legacy COM1-4.
 * console=auto (the default) takes SPCR's UART, else COM1, else the first
 * PCI UART; ttyS<n>, pci[:BB:DD.F] and mmio,0xADDR name one. A UART that
 * is asked for but does not answer gives a `cmdline:` line and auto is
 * used instead; a candidate skipped is named with the reason. With no UART
 * at all the console is the screen alone (keys from PS/2 or USB).
 *
 * Two steps, because SPCR and PCI are known only once ACPI and the PCI
 * scan are done: uartsel_early() opens the legacy port at once (for
 * console=ttyS<n>, and COM1 for auto) so the first boot lines are seen
 * even if the boot dies early; uartsel_choose() settles the console UART
 * and hands it every line printed so far (serial.h serial_settle). */
#ifndef CONSOLE_UARTSEL_H
#define CONSOLE_UARTSEL_H
#include "firmware/cmdline.h"

void uartsel_early(const struct boot_config *cfg);
/* After acpi_init() and pci_scan(); prints the choice. */
void uartsel_choose(const struct boot_config *cfg);

#endif
