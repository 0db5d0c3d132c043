/* test_cmdline.c — kernel command-line parsing and its warnings. */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "firmware/cmdline.h"

static int warned(const struct boot_config *c, const char *needle)
{
    for (unsigned i = 0; i < c->warning_count; i++)
        if (strstr(c->warnings[i], needle))
            return 1;
    return 0;
}

static void test_good(void)
{
    struct boot_config c;
    cmdline_defaults(&c);
    cmdline_parse("  console=ttyS1,9600 maxcpus=4\tnosmp timer_hz=1000 trace.events=65536 "
                  "trace.mask=irq,boot trace.off workload=hwlat debug.fault=3",
                  &c);
    CHECK_EQ(c.warning_count, 0);
    CHECK_EQ(c.console_port, 1);
    CHECK_EQ(c.console_baud, 9600);
    CHECK_EQ(c.maxcpus, 4);
    CHECK(c.nosmp);
    CHECK_EQ(c.timer_hz, 1000);
    CHECK_EQ(c.trace_events, 65536);
    CHECK(!strcmp(c.trace_mask, "irq,boot"));
    CHECK(c.trace_off);
    CHECK(!strcmp(c.workload, "hwlat"));
    CHECK_EQ(c.fault_cpu, 3);
}

static void test_bad_values_keep_defaults(void)
{
    struct boot_config c;
    cmdline_defaults(&c);
    cmdline_parse("maxcpus=banana timer_hz=0 console=ttyS9 trace.events=1000 "
                  "trace.events=99999999999 bogus frob=1 console=ttyS0,7 maxcpus=",
                  &c);
    CHECK(warned(&c, "maxcpus=banana"));
    CHECK(warned(&c, "timer_hz=0"));
    CHECK(warned(&c, "console=ttyS9"));
    CHECK(warned(&c, "trace.events=1000: not a power of two"));
    CHECK(warned(&c, "trace.events=99999999999"));
    CHECK(warned(&c, "bogus: unknown option"));
    CHECK(warned(&c, "frob=1: unknown option"));
    CHECK(warned(&c, "cmdline: ... (2 more)"));          /* the 8th and 9th did not fit */
    CHECK_EQ(c.warning_count, CMDLINE_MAX_WARNINGS);    /* capped, no overflow */
    CHECK_EQ(c.maxcpus, 0);
    CHECK_EQ(c.timer_hz, DEFAULT_TIMER_HZ);
    CHECK_EQ(c.console_port, 0);
    CHECK_EQ(c.console_baud, 115200);
    CHECK_EQ(c.trace_events, DEFAULT_TRACE_EVENTS);
    CHECK_EQ(c.fault_cpu, -1);
}

static void test_edge(void)
{
    struct boot_config c;
    char huge[400];
    memset(huge, 'x', sizeof huge - 1);
    huge[sizeof huge - 1] = 0;
    cmdline_defaults(&c);
    cmdline_parse(huge, &c);
    CHECK(warned(&c, "too long"));
    cmdline_defaults(&c);
    cmdline_parse("", &c);
    cmdline_parse(NULL, &c);
    CHECK_EQ(c.warning_count, 0);
    cmdline_defaults(&c);
    cmdline_parse("maxcpus=4096 timer_hz=10000 trace.events=64 nosmp=1", &c);
    CHECK_EQ(c.maxcpus, 4096);
    CHECK_EQ(c.timer_hz, 10000);
    CHECK_EQ(c.trace_events, 64);
    CHECK(warned(&c, "nosmp=1"));
}

/* trace.memory=: a total in binary units, or a warning and the default. */
static void test_trace_memory(void)
{
    /* clang-format off */
    static const struct { const char *line; uint64_t bytes; bool warns; } cases[] = {
        { "trace.memory=64M", 64ull << 20, false },
        { "trace.memory=1G", 1ull << 30, false },
        { "trace.memory=1g", 1ull << 30, false },
        { "trace.memory=512k", 512ull << 10, false },
        { "trace.memory=64K", 64ull << 10, false },           /* the least */
        { "trace.memory=1024G", 1024ull << 30, false },       /* the most */
        { "trace.memory=1048576", 1ull << 20, false },        /* bytes */
        { "trace.memory=1025G", 0, true },
        { "trace.memory=63K", 0, true },
        { "trace.memory=M", 0, true },
        { "trace.memory=", 0, true },
        { "trace.memory=12X", 0, true },
        { "trace.memory=-1M", 0, true },
        { "trace.memory=99999999999M", 0, true },
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct boot_config c;
        cmdline_defaults(&c);
        cmdline_parse(cases[i].line, &c);
        CHECK_EQ(c.trace_memory, cases[i].bytes);
        CHECK_EQ(c.warning_count, cases[i].warns ? 1u : 0u);
        if (cases[i].warns)
            CHECK(warned(&c, "want a size like 64M or 1G"));
        CHECK_EQ(c.trace_events, DEFAULT_TRACE_EVENTS);      /* untouched either way */
    }
}

static void test_dump_to(void)
{
    static const struct {
        const char *line;
        unsigned to;
        bool warns;
    } cases[] = {
        { "trace.dump_to=serial", DUMP_TO_SERIAL, false },
        { "trace.dump_to=stick", DUMP_TO_STICK, false },
        { "trace.dump_to=stick,serial", DUMP_TO_SERIAL | DUMP_TO_STICK, false },
        { "trace.dump_to=net", DUMP_TO_NET, false },
        { "trace.dump_to=serial,net", DUMP_TO_SERIAL | DUMP_TO_NET, false },
        { "trace.dump_to=nets", 0, true },
        { "trace.dump_to=usb", 0, true },
        { "trace.dump_to=serial,,stick", 0, true },
        { "trace.dump_to=", 0, true },
        { "trace.dump_to=serial,sticks", 0, true },
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct boot_config c;
        cmdline_defaults(&c);
        cmdline_parse(cases[i].line, &c);
        CHECK_EQ(c.dump_to, cases[i].to);
        CHECK_EQ(warned(&c, "trace.dump_to="), cases[i].warns);
    }
}

/* Issue 9's options: trace.on_fault, trace.dump_after, debug.hang. */
static void test_fault_options(void)
{
    struct boot_config c;
    cmdline_defaults(&c);
    CHECK_EQ(c.on_fault, CMDLINE_ON_FAULT_DUMP);
    CHECK_EQ(c.dump_after_s, 0);
    CHECK_EQ(c.hang_cpu, -1);
    cmdline_parse("trace.on_fault=freeze trace.dump_after=600 debug.hang=3", &c);
    CHECK_EQ(c.warning_count, 0);
    CHECK_EQ(c.on_fault, CMDLINE_ON_FAULT_FREEZE);
    CHECK_EQ(c.dump_after_s, 600);
    CHECK_EQ(c.hang_cpu, 3);
    cmdline_parse("trace.on_fault=off trace.dump_after=604800", &c);
    CHECK_EQ(c.on_fault, CMDLINE_ON_FAULT_OFF);
    CHECK_EQ(c.dump_after_s, MAX_DUMP_AFTER_S);
    CHECK_EQ(c.warning_count, 0);

    cmdline_defaults(&c);
    cmdline_parse("trace.on_fault=panic trace.on_fault= trace.dump_after=0 "
                  "trace.dump_after=604801 trace.dump_after=-5 debug.hang=0 debug.hang=x",
                  &c);
    CHECK(warned(&c, "trace.on_fault=panic: want dump, freeze or off; using dump"));
    CHECK(warned(&c, "trace.on_fault=: want dump"));
    CHECK(warned(&c, "trace.dump_after=0: want a number from 1 to 604800; using no dump"));
    CHECK(warned(&c, "trace.dump_after=604801"));
    CHECK(warned(&c, "trace.dump_after=-5"));
    CHECK(warned(&c, "debug.hang=0: want a number from 1 to 4095; using no hang"));
    CHECK(warned(&c, "debug.hang=x"));
    CHECK_EQ(c.warning_count, 7);
    CHECK_EQ(c.on_fault, CMDLINE_ON_FAULT_DUMP);
    CHECK_EQ(c.dump_after_s, 0);
    CHECK_EQ(c.hang_cpu, -1);
}

/* Issue 35's options: trace.stream, and debug.fault_after for a fault in
 * the middle of one. */
static void test_stream_options(void)
{
    struct boot_config c;
    cmdline_defaults(&c);
    CHECK_EQ(c.stream, CMDLINE_STREAM_OFF);
    CHECK_EQ(c.fault_after_s, 0);
    cmdline_parse("trace.stream=net debug.fault=1 debug.fault_after=30", &c);
    CHECK_EQ(c.warning_count, 0);
    CHECK_EQ(c.stream, CMDLINE_STREAM_NET);
    CHECK_EQ(c.fault_after_s, 30);
    cmdline_parse("trace.stream=off", &c);
    CHECK_EQ(c.stream, CMDLINE_STREAM_OFF);
    cmdline_defaults(&c);
    cmdline_parse("trace.stream=serial debug.fault_after=0", &c);
    CHECK(warned(&c, "trace.stream=serial: want off or net; using off"));
    CHECK(warned(&c, "debug.fault_after=0: want a number from 1 to 604800; using at once"));
    CHECK_EQ(c.warning_count, 2);
    CHECK_EQ(c.stream, CMDLINE_STREAM_OFF);
}

static void test_warnings_cut(void)
{
    struct boot_config c;
    cmdline_defaults(&c);
    cmdline_parse("console=ttyS0,7", &c);        /* was the 8th warning above */
    CHECK(warned(&c, "console=ttyS0,7: baud"));
    cmdline_defaults(&c);
    cmdline_parse("a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9 j=10", &c);
    CHECK_EQ(c.warning_count, CMDLINE_MAX_WARNINGS);
    CHECK(strstr(c.warnings[0], "a=1"));
    CHECK(strstr(c.warnings[CMDLINE_MAX_WARNINGS - 2], "g=7"));
    CHECK(!strcmp(c.warnings[CMDLINE_MAX_WARNINGS - 1], "cmdline: ... (3 more)"));
}

static void test_cpu_never_runs(void)
{
    /* 4 CPUs found, 2 started (maxcpus=2). */
    CHECK(strstr(cmdline_cpu_never_runs(0, 4, 2, true), "boot CPU"));
    CHECK(cmdline_cpu_never_runs(1, 4, 2, true) == NULL);
    CHECK(strstr(cmdline_cpu_never_runs(1, 4, 2, false), "did not start"));
    CHECK(strstr(cmdline_cpu_never_runs(2, 4, 2, false), "parked"));
    CHECK(strstr(cmdline_cpu_never_runs(3, 4, 2, false), "parked"));
    CHECK(strstr(cmdline_cpu_never_runs(4, 4, 2, false), "no such CPU"));
    CHECK(strstr(cmdline_cpu_never_runs(4095, 1, 1, false), "no such CPU"));
}

static void test_console(void)
{
    struct boot_config c;
    cmdline_defaults(&c);
    CHECK_EQ(c.console_kind, CONSOLE_AUTO);
    cmdline_parse("console=ttyS3", &c);
    CHECK_EQ(c.console_kind, CONSOLE_TTYS);
    CHECK_EQ(c.console_port, 3);
    cmdline_parse("console=auto", &c);
    CHECK_EQ(c.console_kind, CONSOLE_AUTO);
    cmdline_parse("console=pci", &c);
    CHECK_EQ(c.console_kind, CONSOLE_PCI);
    CHECK(c.console_pci_any);
    cmdline_parse("console=pci:1f:1C.7,57600", &c);
    CHECK_EQ(c.console_kind, CONSOLE_PCI);
    CHECK(!c.console_pci_any);
    CHECK_EQ(c.console_pci_bus, 0x1f);
    CHECK_EQ(c.console_pci_dev, 0x1c);
    CHECK_EQ(c.console_pci_fn, 7);
    CHECK_EQ(c.console_baud, 57600);
    cmdline_parse("console=pci:0:3.0", &c);
    CHECK_EQ(c.console_pci_dev, 3);
    CHECK_EQ(c.console_baud, 115200);
    cmdline_parse("console=mmio,0xFE030000,9600", &c);
    CHECK_EQ(c.console_kind, CONSOLE_MMIO);
    CHECK_EQ(c.console_mmio, 0xFE030000ull);
    CHECK_EQ(c.console_baud, 9600);
    cmdline_parse("console=mmio,0x4000000000", &c);
    CHECK_EQ(c.console_mmio, 0x4000000000ull);
    /* Port N of a multi-port card (issue 22 item 5). */
    cmdline_parse("console=pci:00:04.0/1,57600", &c);
    CHECK_EQ(c.console_kind, CONSOLE_PCI);
    CHECK_EQ(c.console_pci_dev, 4);
    CHECK_EQ(c.console_pci_port, 1);
    CHECK_EQ(c.console_baud, 57600);
    cmdline_parse("console=pci:00:04.2/15", &c);
    CHECK_EQ(c.console_pci_fn, 2);
    CHECK_EQ(c.console_pci_port, 15);
    cmdline_parse("console=pci:00:04.0", &c);
    CHECK_EQ(c.console_pci_port, 0);
    cmdline_parse("console=ttyS0,2", &c);              /* the lowest rate */
    CHECK_EQ(c.console_baud, 2);
    CHECK_EQ(c.warning_count, 0);
}

/* The messages say what is wrong, not just that the syntax is off. */
static void test_console_messages(void)
{
    struct boot_config c;
    cmdline_defaults(&c);
    cmdline_parse("console=ttyS0,1", &c);
    CHECK(warned(&c, "console=ttyS0,1: baud 1 is below the lowest rate, 2"));
    CHECK_EQ(c.console_kind, CONSOLE_AUTO);
    cmdline_defaults(&c);
    cmdline_parse("console=mmio,0x0", &c);
    CHECK(warned(&c, "console=mmio,0x0: address 0 is refused"));
    CHECK_EQ(c.console_kind, CONSOLE_AUTO);
    cmdline_defaults(&c);
    cmdline_parse("console=mmio,0x0,9600", &c);
    CHECK(warned(&c, "address 0 is refused"));
}

static void test_console_bad(void)
{
    /* clang-format off */
    static const char *bad[] = {
        "console=pci:00:20.0", "console=pci:00:03.8", "console=pci:00:03", "console=pci:",
        "console=pci:000:03.0", "console=pcix", "console=mmio,0x", "console=mmio,0x0",
        "console=mmio,0x1000000000000", "console=mmio,FE030000", "console=mmio,0xFG",
        "console=auto,9600", "console=ttyS0x", "console=", "console=pci,7",
        "console=ttyS0,1", "console=pci:00:04.0/", "console=pci:00:04.0/16",
        "console=pci:00:04.0/x", "console=pci:00:04.0/1x", "console=pci/1",
    };
    /* clang-format on */
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct boot_config c;
        cmdline_defaults(&c);
        cmdline_parse("console=ttyS1", &c);
        cmdline_parse(bad[i], &c);
        CHECK_EQ(c.warning_count, 1);
        CHECK(warned(&c, bad[i]) && warned(&c, "using auto"));
        CHECK_EQ(c.console_kind, CONSOLE_AUTO);     /* the default, as the warning says */
    }
}

/* The escape hatches of issue 20: usb=off, usb.skip=, usb.setup_ms=,
 * keyboard=, screen=off. */
static void test_escape_hatches(void)
{
    struct boot_config c;
    cmdline_defaults(&c);
    CHECK(!c.usb_off && !c.screen_off && c.keyboard == CMDLINE_KEYBOARD_BOTH);
    CHECK_EQ(c.usb_skip_kinds, 0);
    cmdline_parse("usb=off screen=off keyboard=legacy "
                  "usb.skip=ehci,pci:00:1d.7,uhci,pci:3:0.0",
                  &c);
    CHECK_EQ(c.warning_count, 0);
    CHECK(c.usb_off && c.screen_off);
    CHECK_EQ(c.keyboard, CMDLINE_KEYBOARD_LEGACY);
    CHECK_EQ(c.usb_skip_kinds, CMDLINE_USB_EHCI | CMDLINE_USB_UHCI);
    CHECK_EQ(c.usb_skip_count, 2);
    CHECK_EQ(c.usb_skip[0].dev, 0x1d);
    CHECK_EQ(c.usb_skip[0].fn, 7);
    CHECK_EQ(c.usb_skip[1].bus, 3);
    cmdline_parse("keyboard=usb", &c);
    CHECK_EQ(c.keyboard, CMDLINE_KEYBOARD_USB);
    CHECK_EQ(c.usb_setup_ms, 10000);                /* the default */
    cmdline_parse("usb.setup_ms=250", &c);
    CHECK_EQ(c.usb_setup_ms, 250);
    CHECK_EQ(c.screen_w, 0);                        /* no screen.mode=: GRUB's default */
    cmdline_parse("screen.mode=1280x720", &c);
    CHECK_EQ(c.warning_count, 0);
    CHECK_EQ(c.screen_w, 1280);
    CHECK_EQ(c.screen_h, 720);
    /* clang-format off */
    static const char *bad[] = {
        "usb=on", "usb.skip=fhci", "usb.skip=pci:00:1d", "usb.skip=pci:00:1d.7/1",
        "usb.skip=ehci,", "keyboard=ps2", "screen=on", "usb.setup_ms=0",
        "usb.setup_ms=600001", "usb.setup_ms=soon", "screen.mode=1280", "screen.mode=x720",
        "screen.mode=1280x", "screen.mode=1280x720x32", "screen.mode=319x200",
        "screen.mode=16385x100", "screen.mode=-1x5", "screen.mode=12345678x1",
    };
    /* clang-format on */
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cmdline_defaults(&c);
        cmdline_parse(bad[i], &c);
        CHECK_EQ(c.warning_count, 1);
        CHECK(warned(&c, bad[i]));
        CHECK(!c.usb_off && !c.screen_off && c.usb_skip_kinds == 0 && c.usb_skip_count == 0);
        CHECK_EQ(c.keyboard, CMDLINE_KEYBOARD_BOTH);
        CHECK_EQ(c.usb_setup_ms, 10000);
        CHECK(c.screen_w == 0 && c.screen_h == 0);
    }
    cmdline_defaults(&c);                   /* a ninth function is refused, the list kept */
    cmdline_parse("usb.skip=pci:0:1.0,pci:0:2.0,pci:0:3.0,pci:0:4.0,pci:0:5.0,pci:0:6.0,"
                  "pci:0:7.0,pci:0:8.0,pci:0:9.0",
                  &c);
    CHECK_EQ(c.warning_count, 1);
    CHECK_EQ(c.usb_skip_count, 0);
}

/* net.key=: 32 hex digits, either case; hidden before the line is printed. */
static void test_net_key(void)
{
    struct boot_config c;
    cmdline_defaults(&c);
    CHECK(!c.net_key_set);
    cmdline_parse("quiet net.key=00112233445566778899AABBccddeeff x=1", &c);
    CHECK(c.net_key_set);
    static const uint8_t want[16] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                      0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF };
    CHECK(!memcmp(c.net_key, want, 16));
    char line[] = "net.key=00ff net.to=1.2.3.4 xnet.key=12 net.key=abc";
    cmdline_hide_key(line);
    CHECK(!strcmp(line, "net.key=**** net.to=1.2.3.4 xnet.key=12 net.key=***"));
    char empty[] = "net.key=";
    cmdline_hide_key(empty);
    CHECK(!strcmp(empty, "net.key="));
    static const char *const bad[] = { "net.key=", "net.key=00ff",
                                       "net.key=00112233445566778899aabbccddeefg",
                                       "net.key=00112233445566778899aabbccddeeff0" };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cmdline_defaults(&c);
        cmdline_parse(bad[i], &c);
        CHECK(!c.net_key_set);
        CHECK_EQ(c.warning_count, 1);
        CHECK(strstr(c.warnings[0], ": want 32 hex digits; using the session code"));
    }
}

static void test_net(void)
{
    struct boot_config c;
    cmdline_defaults(&c);
    CHECK(!c.net_off && !c.net_keys_off && !c.net_to_ip && !c.net_ip);
    cmdline_parse("net=off net.keys=off net.to=10.0.2.2:7000 net.ip=192.168.1.20/16", &c);
    CHECK_EQ(c.warning_count, 0);
    CHECK(c.net_off);
    CHECK(c.net_keys_off);
    CHECK_EQ(c.net_to_ip, 0x0A000202u);
    CHECK_EQ(c.net_to_port, 7000);
    CHECK_EQ(c.net_ip, 0xC0A80114u);
    CHECK_EQ(c.net_mask, 0xFFFF0000u);
    cmdline_defaults(&c);
    cmdline_parse("net.to=192.168.0.255 net.ip=10.1.2.3", &c);
    CHECK_EQ(c.warning_count, 0);
    CHECK_EQ(c.net_to_ip, 0xC0A800FFu);
    CHECK_EQ(c.net_to_port, 0);                       /* 0: the default, 6666 */
    CHECK_EQ(c.net_mask, 0xFFFFFF00u);                /* /24 */
    /* clang-format off */
    static const char *const bad[] = {
        "net=on", "net=", "net.keys=on", "net.to=10.0.2", "net.to=10.0.2.2.5",
        "net.to=256.0.0.1", "net.to=10.0.2.2:0", "net.to=10.0.2.2:65536", "net.to=10.0.2.2:",
        "net.to=0.0.0.0", "net.to=1.2.3.4x", "net.ip=10.0.0.1/31",
        "net.ip=10.0.0.1/0", "net.ip=255.255.255.255", "net.ip=10.0.0", "net.ip=0001.2.3.4",
        "net.to=host.example", "net.key=0123456789abcdef0123456789abcde",
        "net.key=0123456789abcdef0123456789abcdef0", "net.key=0123456789abcdef0123456789abcdeg",
        "net.key=", "net.key=+123456789abcdef0123456789abcdef",
    };
    /* clang-format on */
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cmdline_defaults(&c);
        cmdline_parse(bad[i], &c);
        CHECK_EQ(c.warning_count, 1);
        CHECK(!c.net_off && !c.net_keys_off && !c.net_to_ip && !c.net_to_port && !c.net_ip);
        CHECK(!c.net_key_set);
        if (c.warning_count != 1)
            fprintf(stderr, "  for %s\n", bad[i]);
    }
    cmdline_defaults(&c);
    cmdline_parse("net.to=1.2.3", &c);
    CHECK(warned(&c, "using 255.255.255.255:6666"));
    cmdline_parse("net.ip=1.2.3", &c);
    CHECK(warned(&c, "using DHCP"));
}

/* workload='s value at the limit docs/workloads.md states, and one past
 * it (the runner starts unit tests in the repository's root). */
static void test_workload_value_limit(void)
{
    static char doc[1 << 16];
    FILE *f = fopen("docs/workloads.md", "r");
    CHECK(f != NULL);
    if (!f)
        return;
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = 0;
    const char *said = strstr(doc, "The value may be at most ");
    unsigned limit = 0;
    CHECK(said && sscanf(said, "The value may be at most %u characters", &limit) == 1);
    CHECK(limit > 10 && limit < 1000);
    if (!limit || limit >= 1000)
        return;
    char line[1100] = "workload=";
    memset(line + strlen(line), 'x', limit);
    line[9 + limit] = 0;
    struct boot_config c;
    cmdline_defaults(&c);
    cmdline_parse(line, &c);
    CHECK_EQ(c.warning_count, 0);
    CHECK_EQ(strlen(c.workload), limit);
    strcat(line, "x");
    cmdline_defaults(&c);
    cmdline_parse(line, &c);
    char said_limit[64];
    snprintf(said_limit, sizeof said_limit, "want 1 to %u characters; ignored", limit);
    CHECK(warned(&c, said_limit));
    CHECK_EQ(c.workload[0], 0);
}

/* Row o's field in c, as a number. */
static uint64_t field(const struct boot_config *c, const struct cmdline_option *o)
{
    const uint8_t *at = (const uint8_t *)c + o->offset;
    uint8_t b;
    uint16_t h;
    uint32_t w;
    uint64_t v;
    switch (o->size) {
    case 1:  memcpy(&b, at, 1); return b;
    case 2:  memcpy(&h, at, 2); return h;
    case 4:  memcpy(&w, at, 4); return w;
    default: memcpy(&v, at, 8); return v;
    }
}

/* The word giving row o the number n (NULL: the kind has no range), and
 * what its field then holds. */
static const char *word_at(const struct cmdline_option *o, uint64_t n, char *buf, size_t size,
                           uint64_t *holds)
{
    unsigned long long u = n;
    *holds = n;
    switch (o->kind) {
    case CMDLINE_UINT:
    case CMDLINE_POW2:
        snprintf(buf, size, "%s=%llu", o->name, u);
        return buf;
    case CMDLINE_SIZE: {                    /* in the largest unit that divides it */
        static const char *const units[] = { "", "K", "M", "G" };
        unsigned shift = 30;
        while (shift && (!n || n % (1ull << shift)))
            shift -= 10;
        snprintf(buf, size, "%s=%llu%s", o->name, u >> shift, units[shift / 10]);
        return buf;
    }
    case CMDLINE_CONSOLE:                   /* the baud */
        snprintf(buf, size, "%s=ttyS0,%llu", o->name, u);
        return buf;
    case CMDLINE_SCREEN:                    /* each way */
        snprintf(buf, size, "%s=%llux%llu", o->name, u, u);
        return buf;
    case CMDLINE_NET_TO:                    /* the port */
        snprintf(buf, size, "%s=10.0.2.2:%llu", o->name, u);
        return buf;
    case CMDLINE_NET_IP:                    /* the prefix */
        snprintf(buf, size, "%s=10.0.0.1/%llu", o->name, u);
        *holds = n ? (uint32_t)(0xFFFFFFFFu << (32 - n)) : 0;
        return buf;
    case CMDLINE_USB_SKIP: {                /* n functions */
        size_t at = (size_t)snprintf(buf, size, "%s=", o->name);
        for (uint64_t i = 0; i < n; i++)
            at += (size_t)snprintf(buf + at, size - at, "%spci:0:%llx.0", i ? "," : "",
                                   (unsigned long long)i);
        return buf;
    }
    case CMDLINE_FLAG:
    case CMDLINE_OFF:
    case CMDLINE_TEXT:
    case CMDLINE_ENUM:
    case CMDLINE_BITS:
    case CMDLINE_NET_KEY:                   /* no number: test_net_key */
        return NULL;
    }
    return NULL;
}

/* Every row with a range: taken at lo and hi, refused one past each, with
 * a message naming the word and the range; the field keeps its default. */
static void test_every_range(void)
{
    char word[600], range[64];
    for (unsigned i = 0; i < cmdline_option_count; i++) {
        const struct cmdline_option *o = &cmdline_options[i];
        uint64_t holds, init;
        struct boot_config c;
        if (!word_at(o, o->lo, word, sizeof word, &holds))
            continue;
        cmdline_defaults(&c);
        init = field(&c, o);
        CHECK_EQ(init, o->init);
        snprintf(range, sizeof range, o->kind == CMDLINE_UINT || o->kind == CMDLINE_POW2 ? "from %llu to %llu" : o->kind == CMDLINE_SIZE ? ""
                                                                                                                                         : "%llu..%llu",
                 (unsigned long long)o->lo, (unsigned long long)o->hi);
        const uint64_t ends[] = { o->lo, o->hi, o->lo - 1, o->hi + 1 };
        for (unsigned e = 0; e < 4; e++) {
            if (e == 2 && o->lo == 0)
                continue;                         /* nothing below 0 to write */
            word_at(o, ends[e], word, sizeof word, &holds);
            cmdline_defaults(&c);
            cmdline_parse(word, &c);
            CHECK_EQ(c.warning_count, e < 2 ? 0u : 1u);
            CHECK_EQ(field(&c, o), e < 2 ? holds : init);
            if (o->kind == CMDLINE_CONSOLE)      /* the baud's own words */
                snprintf(range, sizeof range, e == 2 ? "lowest rate, %llu" : "divide %llu",
                         (unsigned long long)(e == 2 ? o->lo : o->hi));
            if (e >= 2)
                CHECK(warned(&c, o->kind == CMDLINE_CONSOLE ? "baud" : "want") &&
                      warned(&c, range));
            if (c.warning_count != (e < 2 ? 0u : 1u) || (e >= 2 && !warned(&c, range)))
                fprintf(stderr, "  for %s (%s)\n", word, c.warning_count ? c.warnings[0] : "");
        }
    }
}

/* Words for a row without a range, each taken (holds: the field after it)
 * or refused (the field keeps its default). */
struct row_words {
    unsigned good, bad;
    char goods[8][300], bads[4][300];
    uint64_t holds[8];
};

static void good_word(struct row_words *w, uint64_t holds, const char *fmt, const char *name,
                      const char *val)
{
    snprintf(w->goods[w->good], sizeof w->goods[0], fmt, name, val);
    w->holds[w->good++] = holds;
}

static void bad_word(struct row_words *w, const char *fmt, const char *name, const char *val)
{
    snprintf(w->bads[w->bad++], sizeof w->bads[0], fmt, name, val);
}

/* FLAG: the word alone; OFF: =off; TEXT: 1 and size-1 characters (not 0 or
 * size); ENUM, BITS: each name, and the last name with one more letter. */
static void row_words(const struct cmdline_option *o, struct row_words *w)
{
    char text[300], name[32] = "";
    memset(w, 0, sizeof *w);
    if (o->kind == CMDLINE_FLAG) {
        good_word(w, 1, "%s%s", o->name, "");
        bad_word(w, "%s=%s", o->name, "1");
    } else if (o->kind == CMDLINE_OFF) {
        good_word(w, 1, "%s=%s", o->name, "off");
        bad_word(w, "%s=%s", o->name, "on");
        bad_word(w, "%s%s", o->name, "");
    } else if (o->kind == CMDLINE_TEXT) {
        memset(text, 'a', o->size);
        text[o->size] = 0;
        bad_word(w, "%s=%s", o->name, text);
        bad_word(w, "%s=%s", o->name, "");
        good_word(w, 0, "%s=%s", o->name, text + 1);
        good_word(w, 0, "%s=%s", o->name, text + o->size - 1);
    } else if (o->kind == CMDLINE_NET_KEY) {           /* 32 hex digits, no fewer or more */
        good_word(w, 1, "%s=%s", o->name, "00112233445566778899aabbccddeeff");
        good_word(w, 1, "%s=%s", o->name, "FFEEDDCCBBAA99887766554433221100");
        bad_word(w, "%s=%s", o->name, "00112233445566778899aabbccddeef");
        bad_word(w, "%s=%s", o->name, "00112233445566778899aabbccddeeff0");
        bad_word(w, "%s=%s", o->name, "g0112233445566778899aabbccddeeff");
    } else {
        const char *p = o->values;
        for (unsigned k = 0; *p && k < 8; k++) {
            size_t n = strcspn(p, ",");
            snprintf(name, sizeof name, "%.*s", (int)n, p);
            good_word(w, o->kind == CMDLINE_ENUM ? k : 1u << k, "%s=%s", o->name, name);
            p += n + (p[n] == ',');
        }
        strcat(name, "x");
        bad_word(w, "%s=%s", o->name, name);
        bad_word(w, "%s=%s", o->name, "");
    }
}

/* The rows without a range: every name, flag and length at its limits. */
static void test_every_word(void)
{
    struct row_words w;
    char word[300];
    for (unsigned i = 0; i < cmdline_option_count; i++) {
        const struct cmdline_option *o = &cmdline_options[i];
        struct boot_config c;
        uint64_t holds;
        if (word_at(o, 0, word, sizeof word, &holds))
            continue;
        row_words(o, &w);
        CHECK(w.good > 0 && w.bad > 0);
        for (unsigned k = 0; k < w.good; k++) {
            cmdline_defaults(&c);
            cmdline_parse(w.goods[k], &c);
            CHECK_EQ(c.warning_count, 0);
            if (o->kind == CMDLINE_TEXT)
                CHECK(!strcmp((const char *)&c + o->offset, strchr(w.goods[k], '=') + 1));
            else
                CHECK_EQ(field(&c, o), w.holds[k]);
        }
        for (unsigned k = 0; k < w.bad; k++) {
            cmdline_defaults(&c);
            cmdline_parse(w.bads[k], &c);
            CHECK_EQ(c.warning_count, 1);
            CHECK(warned(&c, "want"));
            CHECK_EQ(field(&c, o), o->kind == CMDLINE_TEXT ? 0 : o->init);
        }
    }
}

#define WORD_MAX_TESTED 127                     /* cmdline.c takes words up to 127 */

/* Every row's message fits whole after the longest word it quotes: it
 * ends with what is used instead. */
static void test_messages_fit(void)
{
    char word[WORD_MAX_TESTED], dflt[64], tail[80], junk[101];
    memset(junk, '@', sizeof junk - 1);                 /* longer than any TEXT row takes */
    junk[sizeof junk - 1] = 0;
    for (unsigned i = 0; i < cmdline_option_count; i++) {
        const struct cmdline_option *o = &cmdline_options[i];
        struct boot_config c;
        snprintf(word, sizeof word, "%s=%s", o->name, junk);
        cmdline_defaults(&c);
        cmdline_parse(word, &c);
        CHECK_EQ(c.warning_count, 1);
        cmdline_default(o, dflt, sizeof dflt);
        bool falls_back = o->kind == CMDLINE_UINT || o->kind == CMDLINE_POW2 ||
                          o->kind == CMDLINE_SIZE || o->kind == CMDLINE_ENUM || o->kind == CMDLINE_CONSOLE ||
                          o->kind == CMDLINE_NET_TO || o->kind == CMDLINE_NET_IP ||
                          o->kind == CMDLINE_NET_KEY;
        snprintf(tail, sizeof tail, falls_back ? "; using %s" : "; ignored", dflt);
        size_t n = strlen(c.warnings[0]), t = strlen(tail);
        CHECK(n > t && n + 1 < CMDLINE_WARNING_LEN && !strcmp(c.warnings[0] + n - t, tail));
        CHECK(strstr(c.warnings[0], "...: want "));
    }
}

/* The table's words, as the docs and messages say them. */
static void test_table_words(void)
{
    char buf[200];
    static const struct {
        const char *name, *accepts, *dflt;
    } rows[] = {
        { "maxcpus", "a number from 1 to 4096", "all CPUs" },
        { "timer_hz", "a number from 1 to 10000", "100" },
        { "trace.events", "a power of two from 64 to 1048576", "4096" },
        { "trace.memory", "a size like 64M or 1G, 64K to 1024G", "trace.events" },
        { "trace.on_fault", "dump, freeze or off", "dump" },
        { "trace.dump_to", "serial, stick, net or a list of them", "every transport present" },
        { "keyboard", "both, legacy or usb", "both" },
        { "nosmp", "nosmp alone, no value", "" },
        { "usb", "usb=off", "" },
        { "workload", "1 to 95 characters", "none" },
        { "usb.skip", "uhci, ohci, ehci, xhci or pci:BB:DD.F, comma separated; functions 1..8",
          "none" },
        { "net.ip", "A.B.C.D or A.B.C.D/PREFIX, prefix 1..30", "DHCP" },
        { "net.key", "32 hex digits", "the session code" },
    };
    CHECK_EQ(cmdline_option_count, 27);
    for (unsigned r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const struct cmdline_option *o = NULL;
        for (unsigned i = 0; i < cmdline_option_count; i++)
            if (!strcmp(cmdline_options[i].name, rows[r].name))
                o = &cmdline_options[i];
        CHECK(o != NULL);
        if (!o)
            continue;
        cmdline_accepts(o, buf, sizeof buf);
        CHECK(!strcmp(buf, rows[r].accepts));
        cmdline_default(o, buf, sizeof buf);
        CHECK(!strcmp(buf, rows[r].dflt));
    }
}

int main(void)
{
    test_workload_value_limit();
    test_every_range();
    test_every_word();
    test_messages_fit();
    test_table_words();
    test_net();
    test_net_key();
    test_dump_to();
    test_trace_memory();
    test_fault_options();
    test_stream_options();
    test_cpu_never_runs();
    test_warnings_cut();
    test_console();
    test_console_bad();
    test_console_messages();
    test_escape_hatches();
    test_good();
    test_bad_values_keep_defaults();
    test_edge();
    return check_summary("test_cmdline");
}
