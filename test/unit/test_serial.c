/* test_serial.c — opening a 16550 that is still sending (issue 36: Bochs
 * lost the end of the line printed just before COM1 was opened a second
 * time). The UART here is a register model in memory, taken as an MMIO
 * UART of byte-wide registers: its transmitter is busy (LSR: THRE set,
 * TEMT clear) until a model thread lets it drain. serial_open must not
 * touch the divisor, the line control or the FIFOs before TEMT is set
 * (PC16550D: FCR bit 2 clears the transmit FIFO), and must not wait
 * forever for a line that never drains. */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "arch/idt.h"
#include "arch/lapic.h"
#include "check.h"
#include "console/serial.h"
#include "time/tsc.h"

/* What serial.c uses outside the UART: the TSC rate its bounds are
 * counted in (each test sets the one it needs), and the interrupt path,
 * not reached here. */
static uint64_t test_tsc_hz;
uint64_t tsc_hz(void) { return test_tsc_hz; }
void lapic_eoi(void) {}
void idt_set_handler(uint8_t vector, int_handler h)
{
    (void)vector;
    (void)h;
}

enum { THR = 0,
       IER = 1,
       FCR = 2,
       LCR = 3,
       MCR = 4,
       LSR = 5,
       SCR = 7 };
#define LSR_THRE 0x20
#define LSR_TEMT 0x40

static volatile uint8_t regs[8];
static uint8_t fcr_at_drain, lcr_at_drain;

static void *drain_later(void *arg)
{
    (void)arg;
    struct timespec ms20 = { 0, 20 * 1000 * 1000 };
    nanosleep(&ms20, NULL);             /* the last bytes leave the wire */
    fcr_at_drain = regs[FCR];
    lcr_at_drain = regs[LCR];
    __atomic_store_n(&regs[LSR], LSR_THRE | LSR_TEMT, __ATOMIC_SEQ_CST);
    return NULL;
}

static struct uart_desc model(void)
{
    struct uart_desc u;
    memset(&u, 0, sizeof u);
    u.space = UART_MMIO;
    u.width = u.stride = 1;
    u.base = (uint64_t)(uintptr_t)regs;
    u.baud = 115200;
    u.isa_irq = SERIAL_NO_IRQ;
    strcpy(u.name, "model");
    return u;
}

static void test_waits_for_the_transmitter(void)
{
    memset((void *)regs, 0, sizeof regs);
    regs[LSR] = LSR_THRE;               /* FIFO has room; the shift register is busy */
    struct uart_desc u = model();
    /* The bound counted at a pretended 100 THz: hours, so the model
     * thread drains first however loaded the host. */
    test_tsc_hz = 100000000000000ull;
    pthread_t t;
    pthread_create(&t, NULL, drain_later, NULL);
    CHECK(serial_open(&u));
    pthread_join(t, NULL);
    CHECK_EQ(fcr_at_drain, 0);          /* no FIFO reset while bytes were in it */
    CHECK_EQ(lcr_at_drain, 0);          /* nor a new divisor under them */
    CHECK(regs[FCR] & 0x04);            /* and then the FIFOs were reset */
    CHECK_EQ(regs[LCR], 0x03);          /* 8N1 */
}

static void test_dead_line_is_bounded(void)
{
    memset((void *)regs, 0, sizeof regs);
    regs[LSR] = LSR_THRE;               /* never drains */
    struct uart_desc u = model();
    test_tsc_hz = 0;                    /* uncalibrated: serial.c assumes a 5 GHz TSC */
    CHECK(serial_open(&u));             /* returns (bounded), and takes the UART */
    CHECK(serial_present());
    CHECK_EQ(regs[THR], '\n');          /* the note that bytes may be lost went out */
}

int main(void)
{
    test_waits_for_the_transmitter();
    test_dead_line_is_bounded();
    return check_summary("serial");
}
