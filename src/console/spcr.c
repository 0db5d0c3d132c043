/* spcr.c — SPCR parsing (Microsoft "Serial Port Console Redirection
 * Table", revision 4; ACPI 6.5 §5.2.3.2 for the Generic Address
 * Structure). */
#include "console/spcr.h"
#include "lib/bytes.h"
#include "lib/format.h"
#include "lib/kstring.h"

#define SPCR_MIN_LEN     80          /* revisions 1 and 2 */
#define OFF_REVISION     8
#define OFF_INTERFACE    36
#define OFF_GAS          40          /* space, bit width, bit offset, access size, address */
#define OFF_INT_TYPE     52
#define OFF_IRQ          53
#define OFF_BAUD         58
#define OFF_CLOCK        76          /* revision 3+: UART clock in Hz */
#define OFF_PRECISE_BAUD 80          /* revision 4+ */

#define TYPE_16550       0x00        /* fully 16550-compatible */
#define TYPE_16450       0x01        /* 16550 subset (DBGP revision 1) */
#define TYPE_16550_GAS   0x12        /* 16550 with the layout given by the GAS */

#define GAS_MEMORY       0
#define GAS_IO           1
#define ACCESS_LEGACY    0           /* undefined: use the register bit width */
#define ACCESS_QWORD     4

#define INT_PCAT         0x01        /* interrupt type: 8259 IRQ in the IRQ field */
#define ISA_IRQS         16

static const uint16_t com_ports[4] = { 0x3F8, 0x2F8, 0x3E8, 0x2E8 };

static bool header_ok(const uint8_t *t, size_t len, const char **why)
{
    uint8_t sum = 0;
    if (len < SPCR_MIN_LEN || memcmp(t, "SPCR", 4)) {
        *why = "not an SPCR table";
        return false;
    }
    uint32_t n = le32(t + 4);
    if (n < SPCR_MIN_LEN || n > len) {
        *why = "table length out of range";
        return false;
    }
    for (uint32_t i = 0; i < n; i++)
        sum = (uint8_t)(sum + t[i]);
    if (sum) {
        *why = "bad checksum";
        return false;
    }
    uint8_t type = t[OFF_INTERFACE];
    if (type != TYPE_16550 && type != TYPE_16450 && type != TYPE_16550_GAS) {
        *why = "interface type is not a 16550";
        return false;
    }
    return true;
}

/* Register width from the GAS access size (1 byte, 2 word, 3 dword), or
 * from the register bit width when the access size is undefined. */
static unsigned access_bytes(const uint8_t *gas)
{
    uint8_t bits = gas[1], access = gas[3];
    if (access == ACCESS_LEGACY)
        return bits == 32 ? 4 : bits == 16 ? 2
                                           : 1;
    return access < ACCESS_QWORD ? 1u << (access - 1) : 0;
}

static bool layout(const uint8_t *gas, struct uart_desc *u, const char **why)
{
    unsigned width = access_bytes(gas), offset = gas[2];
    if (gas[0] != GAS_MEMORY && gas[0] != GAS_IO) {
        *why = "registers in an address space other than memory or I/O";
        return false;
    }
    if (!le64(gas + 4)) {
        *why = "base address 0 (console redirection disabled)";
        return false;
    }
    if (!width || offset % 8 || offset + 8 > width * 8) {
        *why = "register access size or bit offset unusable";
        return false;
    }
    u->space = gas[0] == GAS_IO ? UART_IO : UART_MMIO;
    u->width = u->stride = (uint8_t)width;
    u->shift = (uint8_t)offset;
    u->base = le64(gas + 4);
    return true;
}

static uint32_t baud_of_code(uint8_t code)
{
    switch (code) {
    case SPCR_BAUD_AS_IS: return 0;
    case 3:               return 9600;
    case 4:               return 19200;
    case 6:               return 57600;
    case 7:               return 115200;
    default:              return 1;                 /* not a standard code */
    }
}

static void rate(const uint8_t *t, struct uart_desc *u, const char **note)
{
    uint32_t len = le32(t + 4);
    if (t[OFF_REVISION] >= 3)
        u->clock = le32(t + OFF_CLOCK);
    if (t[OFF_REVISION] >= 4 && len >= OFF_PRECISE_BAUD + 4 && le32(t + OFF_PRECISE_BAUD)) {
        u->baud = le32(t + OFF_PRECISE_BAUD);
        return;
    }
    u->baud = baud_of_code(t[OFF_BAUD]);
    if (u->baud == 1) {
        u->baud = SERIAL_DEFAULT_BAUD;
        *note = "unknown baud rate code; using 115200";
    }
}

static void name(struct uart_desc *u)
{
    for (unsigned i = 0; i < 4; i++)
        if (u->space == UART_IO && u->base == com_ports[i] && u->stride == 1) {
            ksnprintf(u->name, sizeof u->name, "ttyS%u", i);
            return;
        }
    ksnprintf(u->name, sizeof u->name, "%s:0x%lx", u->space == UART_IO ? "io" : "mmio",
              u->base);
}

bool spcr_parse(const uint8_t *t, size_t len, struct uart_desc *out,
                const char **note, const char **why)
{
    struct uart_desc u = { .isa_irq = SERIAL_NO_IRQ };
    *note = NULL;
    if (!header_ok(t, len, why) || !layout(t + OFF_GAS, &u, why))
        return false;
    rate(t, &u, note);
    if (u.space == UART_IO && (t[OFF_INT_TYPE] & INT_PCAT) && t[OFF_IRQ] < ISA_IRQS)
        u.isa_irq = t[OFF_IRQ];
    name(&u);
    *out = u;
    return true;
}
