/* pci.h — PCI configuration space (mechanism #1, ports 0xCF8/0xCFC) and
 * the list of every function on every bus.
 *
 * pci_scan() walks buses 0..255, every device and, for multi-function
 * devices, every function, once at boot, and keeps the result: drivers
 * then pick their class (pci_find_class) instead of scanning again. A
 * slot whose vendor ID reads 0xFFFF is empty. Only the first 256 bytes of
 * each function's space are reachable this way (no ECAM), which is all
 * the drivers here use. Not for interrupt or trace paths: every access is
 * two port I/Os under a lock. */
#ifndef DEV_PCI_H
#define DEV_PCI_H
#include <stdbool.h>
#include <stdint.h>

#define PCI_MAX_FUNCS    128

/* Standard header offsets (PCI Local Bus Spec 3.0, §6.1). */
#define PCI_VENDOR       0x00
#define PCI_DEVICE       0x02
#define PCI_COMMAND      0x04
#define PCI_PROG_IF      0x09
#define PCI_SUBCLASS     0x0A
#define PCI_CLASS        0x0B
#define PCI_HEADER_TYPE  0x0E
#define PCI_BAR0         0x10
#define PCI_CAP_PTR      0x34
#define PCI_IRQ_LINE     0x3C

#define PCI_CMD_IO       (1u << 0)
#define PCI_CMD_MEMORY   (1u << 1)
#define PCI_CMD_MASTER   (1u << 2)
#define PCI_CMD_INTX_OFF (1u << 10)

struct pci_func {
    uint8_t bus, dev, fn;
    uint16_t vendor, device;
    uint8_t class, subclass, prog_if;
};

/* A BAR decoded: memory (possibly 64-bit) or I/O. */
struct pci_bar {
    uint64_t base;        /* physical address or I/O port */
    uint64_t size;        /* bytes; 0 when the BAR is unimplemented */
    bool io;
    bool prefetchable;
};

/* Enumerate everything once (boot CPU, before the drivers). Returns the
 * number of functions found; more than PCI_MAX_FUNCS are counted but not
 * kept (pci_truncated() says how many were dropped). */
unsigned pci_scan(void);
unsigned pci_count(void);
unsigned pci_truncated(void);
const struct pci_func *pci_func_at(unsigned i);

#define PCI_CLASS_DISPLAY 0x03

/* Whether any function of that class exists (any subclass). */
bool pci_has_class(uint8_t class);
/* The n-th function (0, 1, ...) of a class/subclass (prog_if < 0 = any),
 * or NULL. */
const struct pci_func *pci_find_class(uint8_t class, uint8_t subclass, int prog_if,
                                      unsigned n);
/* The function at bus:dev.fn, or NULL. */
const struct pci_func *pci_find_bdf(uint8_t bus, uint8_t dev, uint8_t fn);

uint8_t pci_read8(const struct pci_func *f, uint8_t off);
uint16_t pci_read16(const struct pci_func *f, uint8_t off);
uint32_t pci_read32(const struct pci_func *f, uint8_t off);
void pci_write16(const struct pci_func *f, uint8_t off, uint16_t v);
void pci_write32(const struct pci_func *f, uint8_t off, uint32_t v);

/* Decode BAR `index` (0..5), sizing it by the write-ones protocol with
 * decoding briefly disabled. False for an index past a 64-bit BAR's upper
 * half, or beyond 5. */
bool pci_bar(const struct pci_func *f, unsigned index, struct pci_bar *out);
/* Set bits in the command register (PCI_CMD_*). */
void pci_enable(const struct pci_func *f, uint16_t cmd_bits);
/* Offset of capability `id` in the capability list, or 0. */
uint8_t pci_find_cap(const struct pci_func *f, uint8_t id);

#endif
