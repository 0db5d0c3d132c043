/* cmdline.h — the kernel command line.
 *
 * Options (space separated; documented in README.md):
 *   console=<uart>               the console UART (auto): auto (ACPI SPCR,
 *                                else COM1, else the first PCI UART),
 *                                ttyS<0-3>[,<baud>], pci[:BB:DD.F][,<baud>],
 *                                mmio,0x<addr>[,<baud>]; baud divides 115200
 *   maxcpus=<n>                  run at most n CPUs (1..4096)
 *   nosmp                        run the boot CPU only
 *   timer_hz=<n>                 LAPIC timer rate per CPU (1..10000, 100)
 *   trace.events=<n>             ring capacity per CPU, power of two
 *                                (64..1048576, 4096)
 *   trace.mask=<names>           categories traced at boot (all)
 *   trace.off                    boot with tracing disabled
 *   workload=<name>              workload to start after boot
 *   debug.fault=<cpu>            that CPU runs ud2 once online (tests the
 *                                exception report; the others go on)
 * A bad value never stops the boot: it produces a warning naming the
 * option and the default used instead. Pure code, tested on the host. */
#ifndef CMDLINE_H
#define CMDLINE_H
#include <stdbool.h>
#include <stdint.h>

#define CMDLINE_MAX_WARNINGS 8
#define CMDLINE_WARNING_LEN  120

enum console_kind { CONSOLE_AUTO, CONSOLE_TTYS, CONSOLE_PCI, CONSOLE_MMIO };

struct boot_config {
    uint8_t  console_kind;             /* enum console_kind */
    unsigned console_port;             /* CONSOLE_TTYS: 0 = COM1 */
    uint32_t console_baud;             /* CONSOLE_AUTO ignores it for SPCR's own */
    bool     console_pci_any;          /* CONSOLE_PCI: the first one */
    uint8_t  console_pci_bus, console_pci_dev, console_pci_fn;
    uint64_t console_mmio;             /* CONSOLE_MMIO: physical address */
    unsigned maxcpus;                  /* 0 = no limit */
    bool     nosmp;
    uint32_t timer_hz;
    uint32_t trace_events;
    char     trace_mask[96];           /* empty = default */
    bool     trace_off;
    char     workload[96];             /* NAME[:KEY=VALUE,...] */
    int32_t  fault_cpu;                /* -1 = none */
    unsigned warning_count;
    char     warnings[CMDLINE_MAX_WARNINGS][CMDLINE_WARNING_LEN];
};

#define DEFAULT_TIMER_HZ      100
#define DEFAULT_TRACE_EVENTS  4096
#define MIN_TRACE_EVENTS      64
#define MAX_TRACE_EVENTS      (1u << 20)

void cmdline_defaults(struct boot_config *cfg);
/* Apply `line` on top of the defaults; problems land in cfg->warnings. */
void cmdline_parse(const char *line, struct boot_config *cfg);

#endif
