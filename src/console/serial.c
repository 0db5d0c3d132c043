/* serial.c — 16550 UART over I/O ports or MMIO. Register names from the
 * PC16550D data sheet. */
#include "console/serial.h"
#include "arch/cpu.h"
#include "arch/idt.h"
#include "arch/lapic.h"
#include "lib/format.h"
#include "lib/kstring.h"
#include "time/tsc.h"

static const uint16_t com_base[4] = { 0x3F8, 0x2F8, 0x3E8, 0x2E8 };
static const uint8_t com_irq[4] = { 4, 3, 4, 3 };  /* ISA IRQs of COM1-COM4 */

#define UART_THR         0      /* transmit holding (write) */
#define UART_RBR         0      /* receive buffer (read) */
#define UART_DLL         0      /* divisor latch low (DLAB = 1) */
#define UART_IER         1      /* interrupt enable */
#define UART_DLM         1      /* divisor latch high (DLAB = 1) */
#define UART_FCR         2      /* FIFO control */
#define UART_LCR         3      /* line control */
#define UART_MCR         4      /* modem control */
#define UART_LSR         5      /* line status */
#define UART_SCR         7      /* scratch */

#define IER_RX_AVAILABLE 0x01
#define LCR_8N1          0x03
#define LCR_DLAB         0x80
#define FCR_ENABLE       0x01
#define FCR_CLEAR_RX     0x02
#define FCR_CLEAR_TX     0x04
#define FCR_TRIGGER_14   0xC0
#define MCR_DTR_RTS_OUT2 0x0B
#define LSR_DR           0x01    /* data ready */
#define LSR_OE           0x02    /* overrun error */
#define LSR_THRE         0x20    /* transmit holding register empty */
#define LSR_TEMT         0x40    /* transmitter empty: FIFO and shift register */

#define UART_CLOCK_HZ    1843200 /* the PC's crystal: divisor 1 = 115200 baud */
#define DEAD_LINE_S      5       /* THRE held this long: the line is dead */
#define ASSUMED_MAX_HZ   5000000000ull  /* before the TSC is calibrated */
/* A 16-byte FIFO and the shift register drain in 1.5 ms at 115200 baud,
 * 170 ms at 1200: longer than this, the line is dead or flow-controlled. */
#define DRAIN_MAX_MS     200

static struct uart_desc uart;           /* the console UART, when present */
static bool present;
static uint64_t overruns;
static bool stalled;                    /* a byte already timed out */
static uint64_t tx_dropped;

/* Output kept until serial_settle(), and which UART (if any) printed it. */
static char early[SERIAL_EARLY_BYTES];
static uint32_t early_len, early_lost;
static bool settled;
static struct uart_desc early_uart;
static bool early_live;

/* Received bytes waiting for serial_getc(): filled by the interrupt
 * handler, or by serial_getc() itself when no interrupt comes. Both run
 * on the boot CPU, and serial_getc() keeps interrupts off while it
 * touches the UART or the buffer, so one index pair needs no lock. */
#define RX_BUF 512
static uint8_t rx_buf[RX_BUF];
static uint32_t rx_head, rx_tail;
static uint64_t irqs;
static bool irq_mode, irq_held;         /* RX interrupt enabled / masked: buffer full */

/* Register access as the descriptor says: memory 1/2/4 bytes wide with
 * the 8 register bits at `shift` within the access (some MMIO UARTs take
 * only full-width accesses); ports are byte-addressable, so an I/O UART's
 * register is read as the byte holding those bits. */
static uint8_t reg_in(const struct uart_desc *u, unsigned r)
{
    uint64_t at = u->base + (uint64_t)r * u->stride;
    uint32_t v;
    if (u->space == UART_IO)
        return inb((uint16_t)(at + u->shift / 8));
    if (u->width == 4)
        v = *(volatile uint32_t *)(uintptr_t)at;
    else if (u->width == 2)
        v = *(volatile uint16_t *)(uintptr_t)at;
    else
        v = *(volatile uint8_t *)(uintptr_t)at;
    return (uint8_t)(v >> u->shift);
}

static void reg_out(const struct uart_desc *u, unsigned r, uint8_t b)
{
    uint64_t at = u->base + (uint64_t)r * u->stride;
    uint32_t v = (uint32_t)b << u->shift;
    if (u->space == UART_IO)
        outb((uint16_t)(at + u->shift / 8), b);
    else if (u->width == 4)
        *(volatile uint32_t *)(uintptr_t)at = v;
    else if (u->width == 2)
        *(volatile uint16_t *)(uintptr_t)at = (uint16_t)v;
    else
        *(volatile uint8_t *)(uintptr_t)at = b;
}

struct uart_desc serial_legacy(unsigned index, uint32_t baud)
{
    struct uart_desc u = { .space = UART_IO, .width = 1, .stride = 1, .baud = baud, .isa_irq = SERIAL_NO_IRQ };
    if (index < SERIAL_LEGACY_PORTS) {
        u.base = com_base[index];
        u.isa_irq = com_irq[index];
    }
    ksnprintf(u.name, sizeof u.name, "ttyS%u", index);
    return u;
}

static bool probe(const struct uart_desc *u)
{
    reg_out(u, UART_SCR, 0x5A);
    if (reg_in(u, UART_SCR) != 0x5A)
        return false;
    reg_out(u, UART_SCR, 0xA5);
    if (reg_in(u, UART_SCR) != 0xA5)
        return false;
    return reg_in(u, UART_LSR) != 0xFF;
}

/* Divisor for `baud` from the input clock; 0 when it cannot be made. */
static uint32_t divisor(const struct uart_desc *u)
{
    uint64_t clock = u->clock ? u->clock : UART_CLOCK_HZ;
    uint64_t d = (clock / 16 + u->baud / 2) / u->baud;
    return d && d <= 0xFFFF ? (uint32_t)d : 0;
}

/* Wait (bounded) until the transmitter has sent everything: the FIFO
 * reset and the new divisor below would otherwise cut off what was
 * printed last, by the firmware, GRUB or this kernel's first open of the
 * same port (PC16550D: FCR bit 2 clears the transmit FIFO). False when it
 * did not drain in time. */
static bool tx_drained(const struct uart_desc *u)
{
    uint64_t hz = tsc_hz() ? tsc_hz() : ASSUMED_MAX_HZ;
    uint64_t t0 = rdtsc();
    while (!(reg_in(u, UART_LSR) & LSR_TEMT)) {
        if (rdtsc() - t0 > hz / 1000 * DRAIN_MAX_MS)
            return false;
        cpu_relax();
    }
    return true;
}

bool serial_open(const struct uart_desc *u)
{
    if (!u->base || (u->baud && !divisor(u)) || !probe(u))
        return false;
    bool drained = tx_drained(u);
    reg_out(u, UART_IER, 0);                   /* polled: no UART interrupts */
    if (u->baud) {                             /* else keep the firmware's rate */
        uint32_t d = divisor(u);
        reg_out(u, UART_LCR, LCR_DLAB);
        reg_out(u, UART_DLL, (uint8_t)d);
        reg_out(u, UART_DLM, (uint8_t)(d >> 8));
    }
    reg_out(u, UART_LCR, LCR_8N1);
    reg_out(u, UART_FCR, FCR_ENABLE | FCR_CLEAR_RX | FCR_CLEAR_TX | FCR_TRIGGER_14);
    reg_out(u, UART_MCR, MCR_DTR_RTS_OUT2);
    uart = *u;
    present = true;
    stalled = irq_mode = irq_held = false;
    if (!drained) {
        char note[160];
        int n = ksnprintf(note, sizeof note,
                          "serial: %s still sending after %u ms; its FIFO was reset, a few bytes "
                          "before this line may be lost\n",
                          u->name, DRAIN_MAX_MS);
        serial_write(note, n < (int)sizeof note ? (unsigned long)n : sizeof note - 1);
    }
    return true;
}

bool serial_init(unsigned index, uint32_t baud)
{
    struct uart_desc u = serial_legacy(index, baud);
    return index < SERIAL_LEGACY_PORTS && baud && serial_open(&u);
}

static bool same_uart(const struct uart_desc *a, const struct uart_desc *b)
{
    return a->space == b->space && a->base == b->base && a->baud == b->baud;
}

void serial_settle(void)
{
    if (settled)
        return;
    settled = true;
    if (!present || (early_live && same_uart(&uart, &early_uart)))
        return;
    serial_write(early, early_len);
    if (early_lost) {
        char note[80];
        int n = ksnprintf(note, sizeof note, "serial: %u earlier bytes not kept\n", early_lost);
        serial_write(note, (unsigned long)n);
    }
}

bool serial_present(void) { return present; }
const char *serial_name(void) { return present ? uart.name : "none"; }
uint64_t serial_overruns(void) { return overruns; }
uint64_t serial_tx_dropped(void) { return tx_dropped; }
uint64_t serial_irqs(void) { return irqs; }
uint8_t serial_isa_irq(void) { return present ? uart.isa_irq : SERIAL_NO_IRQ; }

/* Every LSR read goes through here: reading LSR clears its overrun bit,
 * so an overrun seen while transmitting must be counted too. */
static uint8_t lsr(void)
{
    uint8_t v = reg_in(&uart, UART_LSR);
    if (v & LSR_OE)
        overruns++;
    return v;
}

void serial_putc(char c)
{
    if (!present)
        return;
    /* A full FIFO with the byte written anyway overwrites data: wait for
     * THRE. A real UART drains a byte in microseconds and an emulated one
     * may pause while its host is busy, so only THRE held for seconds
     * means a dead line. Then bytes are dropped (and counted) without
     * waiting until the transmitter drains again: a dump to a dead port
     * ends in seconds rather than hours, and never hangs the kernel. */
    if (!(lsr() & LSR_THRE)) {
        if (stalled) {
            tx_dropped++;
            return;
        }
        uint64_t hz = tsc_hz() ? tsc_hz() : ASSUMED_MAX_HZ;
        uint64_t t0 = rdtsc();
        while (!(lsr() & LSR_THRE)) {
            if (rdtsc() - t0 > hz * DEAD_LINE_S) {
                stalled = true;
                tx_dropped++;
                return;
            }
            cpu_relax();
        }
    }
    stalled = false;
    reg_out(&uart, UART_THR, (uint8_t)c);
}

static void keep_early(const char *s, unsigned long n)
{
    if (!early_len && !early_lost && present) {
        early_uart = uart;                     /* this one prints the early lines live */
        early_live = true;
    }
    unsigned long room = SERIAL_EARLY_BYTES - early_len;
    unsigned long take = n < room ? n : room;
    memcpy(early + early_len, s, take);
    early_len += (uint32_t)take;
    early_lost += (uint32_t)(n - take);
}

void serial_write(const char *s, unsigned long n)
{
    if (!settled)
        keep_early(s, n);
    for (unsigned long i = 0; i < n; i++) {
        if (s[i] == '\n')
            serial_putc('\r');
        serial_putc(s[i]);
    }
}

/* Move what the UART holds into rx_buf, as far as it has room. When it
 * is full the rest stays in the UART's FIFO and the receive interrupt is
 * masked until serial_getc() makes room: a sender with flow control (or
 * QEMU) then waits instead of losing bytes; a real line overruns the FIFO,
 * which LSR reports and we count. */
static void drain(void)
{
    while (rx_head - rx_tail < RX_BUF && (lsr() & LSR_DR))
        rx_buf[rx_head++ % RX_BUF] = reg_in(&uart, UART_RBR);
    bool full = rx_head - rx_tail == RX_BUF;
    if (irq_mode && full != irq_held) {
        irq_held = full;
        reg_out(&uart, UART_IER, full ? 0 : IER_RX_AVAILABLE);
    }
}

static void rx_interrupt(struct int_frame *f)
{
    (void)f;
    irqs++;
    drain();                            /* empty FIFO: the UART drops its request */
    lapic_eoi();
}

bool serial_irq_enable(uint8_t vector)
{
    if (!present || uart.isa_irq == SERIAL_NO_IRQ)
        return false;
    idt_set_handler(vector, rx_interrupt);
    irq_mode = true;
    reg_out(&uart, UART_IER, IER_RX_AVAILABLE); /* MCR.OUT2 already gates it to the bus */
    return true;
}

int serial_getc(void)
{
    if (!present)
        return -1;
    uint64_t flags = irq_save();
    drain();                            /* polled mode, or an interrupt never came */
    int c = rx_head != rx_tail ? rx_buf[rx_tail++ % RX_BUF] : -1;
    if (irq_held)
        drain();                        /* room again: refill, unmask */
    irq_restore(flags);
    return c;
}
