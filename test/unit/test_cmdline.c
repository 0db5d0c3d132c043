/* test_cmdline.c — kernel command-line parsing and its warnings. */
#include <string.h>
#include "check.h"
#include "cmdline.h"

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
                  "trace.mask=irq,boot trace.off workload=hwlat debug.fault=3", &c);
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
                  "trace.events=99999999999 bogus frob=1 console=ttyS0,7 maxcpus=", &c);
    CHECK(warned(&c, "maxcpus=banana"));
    CHECK(warned(&c, "timer_hz=0"));
    CHECK(warned(&c, "console=ttyS9"));
    CHECK(warned(&c, "trace.events=1000: not a power of two"));
    CHECK(warned(&c, "trace.events=99999999999"));
    CHECK(warned(&c, "bogus: unknown option"));
    CHECK(warned(&c, "frob=1: unknown option"));
    CHECK(warned(&c, "console=ttyS0,7: baud"));
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
    CHECK_EQ(c.warning_count, 0);
}

static void test_console_bad(void)
{
    static const char *bad[] = {
        "console=pci:00:20.0", "console=pci:00:03.8", "console=pci:00:03", "console=pci:",
        "console=pci:000:03.0", "console=pcix", "console=mmio,0x", "console=mmio,0x0",
        "console=mmio,0x1000000000000", "console=mmio,FE030000", "console=mmio,0xFG",
        "console=auto,9600", "console=ttyS0x", "console=", "console=pci,7",
    };
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

int main(void)
{
    test_console();
    test_console_bad();
    test_good();
    test_bad_values_keep_defaults();
    test_edge();
    return check_summary("test_cmdline");
}
