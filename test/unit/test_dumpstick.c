/* test_dumpstick.c — the kernel glue between the dump and the stick: a
 * GPT disk in memory registered as a block device, the real registry,
 * partition finder and dump area; kprintf and the console sink captured.
 * Checks where each trace.dump_to= setting sends the dump, and that
 * foreign, read-only or failing devices leave the serial dump whole. */
#include <stdarg.h>
#include <stdio.h>
#include "buildid.h"
#include "check.h"
#include "firmware/cmdline.h"
#include "lib/crc32.h"
#include "ramdisk.h"
#include "recorder/dumparea.h"
#include "recorder/dumpstick.h"

#define DISK  600
#define FIRST 100
#define COUNT 400

static char said[8192], serial[8192];
static size_t said_len, serial_len;

int kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(said + said_len, sizeof said - said_len, fmt, ap);
    va_end(ap);
    said_len += (size_t)n < sizeof said - said_len ? (size_t)n : 0;
    return n;
}

static void to_serial(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    memcpy(serial + serial_len, s, n);
    serial_len += n;
}

static void p32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i);
}
static void p64(uint8_t *p, uint64_t v)
{
    p32(p, (uint32_t)v);
    p32(p + 4, (uint32_t)(v >> 32));
}

/* A protective MBR and a GPT whose first entry is the dump area. */
static void make_stick(struct ramdisk *rd, uint64_t id)
{
    static const uint8_t type[16] = DUMPAREA_GPT_TYPE;
    ramdisk_init(rd, DISK);
    uint8_t *d = rd->data, *h = d + 512, *e = d + 1024;
    d[446 + 4] = 0xEE, p32(d + 446 + 8, 1), p32(d + 446 + 12, DISK - 1);
    d[510] = 0x55, d[511] = 0xAA;
    memcpy(e, type, 16), p64(e + 32, FIRST), p64(e + 40, FIRST + COUNT - 1);
    memcpy(h, "EFI PART", 8), p32(h + 12, 92), p64(h + 72, 2), p32(h + 80, 4), p32(h + 84, 128);
    p32(h + 88, crc32_update(0, e, 4 * 128));
    p32(h + 16, crc32_update(0, h, 92));
    dumparea_format(d + FIRST * 512, COUNT, id);
}

static const char *dump_text = "DUMP BEGIN v=1 dump=1\n%M 1 x=1\nDUMP END dump=1\n";

/* One dump as dump.c runs it: open, lines through the sink, close. */
static void one_dump_on(bool boot_cpu)
{
    struct dump_sink sink = { to_serial, NULL, NULL };
    said_len = serial_len = 0;
    said[0] = 0;
    dumpstick_open(&sink, boot_cpu);
    for (const char *s = dump_text; *s;) {
        const char *nl = strchr(s, '\n');
        sink.write(sink.ctx, s, (size_t)(nl - s + 1));
        s = nl + 1;
    }
    dumpstick_close();
}

static void one_dump(void) { one_dump_on(true); }

static bool on_stick(struct ramdisk *rd, uint64_t ring_idx)
{
    const uint8_t *h = rd->data + (FIRST + 1 + ring_idx) * 512;
    size_t len = strlen(dump_text);
    return !memcmp(h, DUMPAREA_REC_MAGIC, 8) && h[12] == DUMPAREA_DONE && h[32] == len &&
           !memcmp(h + 512, dump_text, len);
}

static bool serial_whole(void)
{
    return serial_len == strlen(dump_text) && !memcmp(serial, dump_text, serial_len);
}

int main(void)
{
    static struct ramdisk foreign, ro, stick;
    dumpstick_init(DUMP_TO_STICK);                   /* no device yet */
    one_dump();
    CHECK(serial_whole());
    CHECK(strstr(said, "no dump area found") != NULL);

    make_stick(&foreign, BT_BUILD_ID + 1);           /* another build's stick */
    foreign.dev.name = "usb0";
    make_stick(&ro, BT_BUILD_ID);
    ro.dev.name = "usb1", ro.dev.read_only = true;
    make_stick(&stick, BT_BUILD_ID);
    stick.dev.name = "usb2";
    CHECK(blockdev_register(&foreign.dev) && blockdev_register(&ro.dev));
    CHECK(blockdev_register(&stick.dev));
    dumpstick_init(0);                                /* default: both */
    one_dump();
    CHECK(serial_whole());
    CHECK(strstr(said, "usb0: dump area of another build") != NULL);
    CHECK(strstr(said, "usb1: write-protected") != NULL);
    CHECK(strstr(said, "dump #1 written to usb2 partition 1") != NULL);
    CHECK(on_stick(&stick, 0));
    CHECK_EQ(foreign.writes + ro.writes, 0);

    unsigned before = stick.writes;
    one_dump_on(false);                               /* a fault on an AP */
    CHECK(serial_whole());
    CHECK_EQ(stick.writes, before);
    CHECK(strstr(said, "off the boot CPU skips the stick") != NULL);

    dumpstick_init(DUMP_TO_STICK);                   /* the stick only */
    one_dump();
    CHECK_EQ(serial_len, 0);
    CHECK(on_stick(&stick, 2));
    CHECK(strstr(said, "dump #2 written") != NULL);

    stick.fail_after = stick.writes;                 /* unplugged */
    dumpstick_init(DUMP_TO_SERIAL | DUMP_TO_STICK);
    one_dump();
    CHECK(serial_whole());
    CHECK(strstr(said, "usb2: device gone; this dump goes to the serial console") != NULL);
    dumpstick_init(DUMP_TO_SERIAL);
    stick.fail_after = 0;
    one_dump();
    CHECK(serial_whole());
    CHECK_EQ(said_len, 0);
    if (check_failed)
        fprintf(stderr, "last console text:\n%s", said);
    return check_summary("test_dumpstick");
}
