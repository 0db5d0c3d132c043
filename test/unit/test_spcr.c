/* test_spcr.c — SPCR parsing from table bytes. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "console/spcr.h"

static uint8_t t[128];

static void put32(size_t off, uint32_t v) { memcpy(t + off, &v, 4); }
static void put64(size_t off, uint64_t v) { memcpy(t + off, &v, 8); }

/* A revision-`rev` table: interface type, GAS (space, bit width, bit
 * offset, access size, address), baud code. */
static size_t table(uint8_t rev, uint8_t type, uint8_t space, uint8_t bits, uint8_t offset,
                    uint8_t access, uint64_t addr, uint8_t baud)
{
    size_t len = rev >= 4 ? 88 : 80;
    memset(t, 0, sizeof t);
    memcpy(t, "SPCR", 4);
    put32(4, (uint32_t)len);
    t[8] = rev;
    t[36] = type;
    t[40] = space;
    t[41] = bits;
    t[42] = offset;
    t[43] = access;
    put64(44, addr);
    t[58] = baud;
    return len;
}

static void checksum(size_t len)
{
    uint8_t sum = 0;
    t[9] = 0;
    for (size_t i = 0; i < len; i++)
        sum = (uint8_t)(sum + t[i]);
    t[9] = (uint8_t)-sum;
}

static int parse(size_t len, struct uart_desc *u, const char **note, const char **why)
{
    *why = NULL;
    return spcr_parse(t, len, u, note, why);
}

static void test_io_com1(void)
{
    struct uart_desc u;
    const char *note, *why;
    size_t len = table(2, 0, 1, 8, 0, 1, 0x3F8, 7);
    t[52] = 1;                          /* PC-AT IRQ */
    t[53] = 4;
    checksum(len);
    CHECK(parse(len, &u, &note, &why));
    CHECK_EQ(u.space, UART_IO);
    CHECK_EQ(u.base, 0x3F8);
    CHECK_EQ(u.width, 1);
    CHECK_EQ(u.stride, 1);
    CHECK_EQ(u.shift, 0);
    CHECK_EQ(u.baud, 115200);
    CHECK_EQ(u.isa_irq, 4);
    CHECK(!strcmp(u.name, "ttyS0"));
    CHECK(note == NULL);
}

static void test_mmio_dword(void)
{
    struct uart_desc u;
    const char *note, *why;
    size_t len = table(2, 0x12, 0, 32, 0, 3, 0xFE030000ull, 6);
    t[52] = 1;                          /* an IRQ for an MMIO UART is not ISA */
    t[53] = 4;
    checksum(len);
    CHECK(parse(len, &u, &note, &why));
    CHECK_EQ(u.space, UART_MMIO);
    CHECK_EQ(u.base, 0xFE030000ull);
    CHECK_EQ(u.width, 4);
    CHECK_EQ(u.stride, 4);
    CHECK_EQ(u.baud, 57600);
    CHECK_EQ(u.isa_irq, SERIAL_NO_IRQ);
    CHECK(!strcmp(u.name, "mmio:0xfe030000"));
    /* Register layouts: interface type, GAS bit width, bit offset, access
     * size -> width and shift; each with its own baud code. */
    static const struct {
        uint8_t type, bits, offset, access, baud, width, shift;
        uint32_t want_baud;
    } cases[] = {
        { 1, 32, 0, 0, 3, 4, 0, 9600 },       /* legacy access size: bit width decides */
        { 0, 16, 8, 2, 4, 2, 8, 19200 },      /* byte register in a word's high byte */
        { 0, 8, 0, 0, 7, 1, 0, 115200 },
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        len = table(2, cases[i].type, 0, cases[i].bits, cases[i].offset, cases[i].access,
                    0x1000000000ull, cases[i].baud);
        checksum(len);
        CHECK(parse(len, &u, &note, &why));
        CHECK_EQ(u.width, cases[i].width);
        CHECK_EQ(u.stride, cases[i].width);
        CHECK_EQ(u.shift, cases[i].shift);
        CHECK_EQ(u.baud, cases[i].want_baud);
        CHECK(!strcmp(u.name, "mmio:0x1000000000"));
    }
}

static void test_io_elsewhere_and_as_is(void)
{
    struct uart_desc u;
    const char *note, *why;
    size_t len = table(2, 0, 1, 8, 0, 1, 0xE000, 0);
    checksum(len);
    CHECK(parse(len, &u, &note, &why));
    CHECK(!strcmp(u.name, "io:0xe000"));
    CHECK_EQ(u.baud, 0);                /* keep the firmware's divisor */
    CHECK_EQ(u.isa_irq, SERIAL_NO_IRQ);
}

static void test_baud_codes_clock_precise(void)
{
    struct uart_desc u;
    const char *note, *why;
    size_t len = table(2, 0, 1, 8, 0, 1, 0x2F8, 5);     /* 5: not a standard code */
    checksum(len);
    CHECK(parse(len, &u, &note, &why));
    CHECK_EQ(u.baud, 115200);
    CHECK(note && strstr(note, "baud"));
    CHECK(!strcmp(u.name, "ttyS1"));
    len = table(2, 0, 1, 8, 0, 1, 0x2F8, 7);
    put32(76, 48000000);                /* reserved before revision 3: ignored */
    checksum(len);
    CHECK(parse(len, &u, &note, &why));
    CHECK_EQ(u.clock, 0);
    len = table(4, 0, 0, 8, 0, 1, 0xFE030000ull, 5);
    put32(76, 48000000);
    put32(80, 1500000);                 /* precise rate wins over the code */
    checksum(len);
    CHECK(parse(len, &u, &note, &why));
    CHECK_EQ(u.clock, 48000000);
    CHECK_EQ(u.baud, 1500000);
    CHECK(note == NULL);
}

static void test_refused(void)
{
    struct uart_desc u;
    const char *note, *why;
    size_t len = table(2, 0, 1, 8, 0, 1, 0x3F8, 7);
    checksum(len);
    t[60] ^= 1;                         /* bad checksum */
    CHECK(!parse(len, &u, &note, &why) && why && strstr(why, "checksum"));
    len = table(2, 3, 0, 8, 0, 1, 0x9000000, 7);        /* ARM PL011 */
    checksum(len);
    CHECK(!parse(len, &u, &note, &why) && why && strstr(why, "interface type"));
    len = table(2, 0, 2, 8, 0, 1, 0x3F8, 7);            /* PCI config space */
    checksum(len);
    CHECK(!parse(len, &u, &note, &why) && why && strstr(why, "address space"));
    len = table(2, 0, 1, 8, 0, 1, 0, 7);                /* redirection disabled */
    checksum(len);
    CHECK(!parse(len, &u, &note, &why) && why && strstr(why, "disabled"));
    len = table(2, 0, 0, 64, 0, 4, 0xFE030000ull, 7);   /* qword registers */
    checksum(len);
    CHECK(!parse(len, &u, &note, &why) && why && strstr(why, "access"));
    len = table(2, 0, 0, 8, 4, 1, 0xFE030000ull, 7);    /* bit offset inside a byte */
    checksum(len);
    CHECK(!parse(len, &u, &note, &why) && why);
    len = table(2, 0, 1, 8, 0, 1, 0x3F8, 7);
    checksum(len);
    CHECK(!parse(len - 1, &u, &note, &why) && why);     /* cut short */
    memcpy(t, "SPCX", 4);
    CHECK(!parse(len, &u, &note, &why) && why && strstr(why, "not an SPCR"));
}

int main(void)
{
    test_io_com1();
    test_mmio_dword();
    test_io_elsewhere_and_as_is();
    test_baud_codes_clock_precise();
    test_refused();
    return check_summary("test_spcr");
}
