/* serial.c — polled 16550 UART. Register names from the PC16550D data sheet. */
#include "serial.h"
#include "cpu.h"
#include "idt.h"
#include "lapic.h"
#include "tsc.h"

static const uint16_t com_base[4] = { 0x3F8, 0x2F8, 0x3E8, 0x2E8 };

#define UART_THR 0      /* transmit holding (write) */
#define UART_RBR 0      /* receive buffer (read) */
#define UART_DLL 0      /* divisor latch low (DLAB = 1) */
#define UART_IER 1      /* interrupt enable */
#define UART_DLM 1      /* divisor latch high (DLAB = 1) */
#define UART_FCR 2      /* FIFO control */
#define UART_LCR 3      /* line control */
#define UART_MCR 4      /* modem control */
#define UART_LSR 5      /* line status */
#define UART_SCR 7      /* scratch */

#define IER_RX_AVAILABLE 0x01
#define LCR_8N1        0x03
#define LCR_DLAB       0x80
#define FCR_ENABLE     0x01
#define FCR_CLEAR_RX   0x02
#define FCR_CLEAR_TX   0x04
#define FCR_TRIGGER_14 0xC0
#define MCR_DTR_RTS_OUT2 0x0B
#define LSR_DR         0x01    /* data ready */
#define LSR_OE         0x02    /* overrun error */
#define LSR_THRE       0x20    /* transmit holding register empty */

#define UART_CLOCK     115200  /* divisor 1 = 115200 baud */
#define DEAD_LINE_S    5       /* THRE held this long: the line is dead */
#define ASSUMED_MAX_HZ 5000000000ull  /* before the TSC is calibrated */

static uint16_t port;
static bool present;
static unsigned port_index;
static uint64_t overruns;
static bool stalled;                    /* a byte already timed out */
static uint64_t tx_dropped;
static const uint8_t com_irq[4] = { 4, 3, 4, 3 };  /* ISA IRQs of COM1-COM4 */

/* Received bytes waiting for serial_getc(): filled by the interrupt
 * handler, or by serial_getc() itself when no interrupt comes. Both run
 * on the boot CPU, and serial_getc() keeps interrupts off while it
 * touches the UART or the buffer, so one index pair needs no lock. */
#define RX_BUF 512
static uint8_t rx_buf[RX_BUF];
static uint32_t rx_head, rx_tail;
static uint64_t irqs;
static bool irq_mode, irq_held;         /* RX interrupt enabled / masked: buffer full */

static bool probe(uint16_t base)
{
    outb(base + UART_SCR, 0x5A);
    if (inb(base + UART_SCR) != 0x5A)
        return false;
    outb(base + UART_SCR, 0xA5);
    if (inb(base + UART_SCR) != 0xA5)
        return false;
    return inb(base + UART_LSR) != 0xFF;
}

bool serial_init(unsigned index, uint32_t baud)
{
    if (index >= 4 || baud == 0 || baud > UART_CLOCK)
        return false;
    uint16_t base = com_base[index];
    if (!probe(base))
        return false;
    uint16_t divisor = (uint16_t)(UART_CLOCK / baud);
    outb(base + UART_IER, 0);                 /* polled: no UART interrupts */
    outb(base + UART_LCR, LCR_DLAB);
    outb(base + UART_DLL, divisor & 0xFF);
    outb(base + UART_DLM, divisor >> 8);
    outb(base + UART_LCR, LCR_8N1);
    outb(base + UART_FCR, FCR_ENABLE | FCR_CLEAR_RX | FCR_CLEAR_TX | FCR_TRIGGER_14);
    outb(base + UART_MCR, MCR_DTR_RTS_OUT2);
    port = base;
    port_index = index;
    present = true;
    return true;
}

bool serial_present(void) { return present; }
uint64_t serial_overruns(void) { return overruns; }
uint64_t serial_tx_dropped(void) { return tx_dropped; }
uint64_t serial_irqs(void) { return irqs; }
uint8_t serial_isa_irq(void) { return com_irq[port_index]; }

/* Every LSR read goes through here: reading LSR clears its overrun bit,
 * so an overrun seen while transmitting must be counted too. */
static uint8_t lsr(void)
{
    uint8_t v = inb(port + UART_LSR);
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
    outb(port + UART_THR, (uint8_t)c);
}

void serial_write(const char *s, unsigned long n)
{
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
        rx_buf[rx_head++ % RX_BUF] = inb(port + UART_RBR);
    bool full = rx_head - rx_tail == RX_BUF;
    if (irq_mode && full != irq_held) {
        irq_held = full;
        outb(port + UART_IER, full ? 0 : IER_RX_AVAILABLE);
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
    if (!present)
        return false;
    idt_set_handler(vector, rx_interrupt);
    irq_mode = true;
    outb(port + UART_IER, IER_RX_AVAILABLE);   /* MCR.OUT2 already gates it to the bus */
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
