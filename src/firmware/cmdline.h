/* cmdline.h — the kernel command line.
 *
 * Options are space separated; each one is a row of cmdline.def (name,
 * kind, range, default, help), which the parser walks and
 * docs/kernel-options.md is made from.
 * A bad value never stops the boot: it produces a warning naming the
 * option and the default used instead. Pure code, tested on the host. */
#ifndef FIRMWARE_CMDLINE_H
#define FIRMWARE_CMDLINE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CMDLINE_MAX_WARNINGS 8
#define CMDLINE_USB_SKIP_MAX 8               /* usb.skip=pci:... functions kept */
#define CMDLINE_WARNING_LEN  176             /* a 40-character word and any row's "want" */

enum console_kind { CONSOLE_AUTO,
                    CONSOLE_TTYS,
                    CONSOLE_PCI,
                    CONSOLE_MMIO };

#define CMDLINE_PCI_PORTS 16           /* console=pci:BB:DD.F/N: N below this */
/* 115200 / baud must fit the 16550's 16-bit divisor: 2 is the lowest rate
 * that divides 115200 (1 would need 115200). */
#define CMDLINE_MIN_BAUD  2

struct boot_config {
    uint8_t console_kind;             /* enum console_kind */
    unsigned console_port;             /* CONSOLE_TTYS: 0 = COM1 */
    uint32_t console_baud;             /* CONSOLE_AUTO ignores it for SPCR's own */
    bool console_pci_any;          /* CONSOLE_PCI: the first one */
    uint8_t console_pci_bus, console_pci_dev, console_pci_fn;
    uint8_t console_pci_port;         /* CONSOLE_PCI: port N of a multi-port card */
    uint64_t console_mmio;             /* CONSOLE_MMIO: physical address */
    unsigned maxcpus;                  /* 0 = no limit */
    bool nosmp;
    uint32_t timer_hz;
    bool timer_hz_given;           /* timer_hz= said so: never lowered (timer_fit) */
    uint32_t trace_events;
    uint64_t trace_memory;             /* bytes; 0 = per CPU (trace_events) */
    char trace_mask[96];           /* empty = default */
    bool trace_off;
    unsigned dump_to;                  /* DUMP_TO_* bits; 0 = the default */
    char workload[96];             /* NAME[:KEY=VALUE,...] */
    int32_t fault_cpu;                /* -1 = none */
    uint32_t fault_after_s;            /* debug.fault_after=: 0 = at once */
    int32_t hang_cpu;                 /* -1 = none */
    uint8_t on_fault;                 /* CMDLINE_ON_FAULT_* */
    uint8_t stream;                   /* CMDLINE_STREAM_*: trace.stream= */
    uint32_t dump_after_s;             /* 0 = never */
    bool usb_off;                  /* usb=off: touch no USB controller */
    unsigned usb_skip_kinds;           /* usb.skip=ehci,...: CMDLINE_USB_* bits */
    unsigned usb_skip_count;           /* usb.skip=pci:BB:DD.F,...: these functions */
    struct {
        uint8_t bus, dev, fn;
    } usb_skip[CMDLINE_USB_SKIP_MAX];
    uint32_t usb_setup_ms;             /* usb.setup_ms=: one controller's setup, at most */
    uint8_t keyboard;                 /* CMDLINE_KEYBOARD_*: where keys come from */
    bool screen_off;               /* screen=off: no screen console */
    uint32_t screen_w, screen_h;       /* screen.mode=WxH (grub.cfg asks GRUB); 0: none */
    bool net_off;                  /* net=off: touch no network controller */
    bool net_keys_off;             /* net.keys=off */
    bool net_key_set;              /* net.key=<32 hex digits>: the boot's key */
    uint8_t net_key[16];
    uint32_t net_to_ip;                /* net.to=: 0 = the default (broadcast) */
    uint16_t net_to_port;              /* 0 = 6666 */
    uint32_t net_ip, net_mask;         /* net.ip=: 0 = DHCP */
    unsigned warning_count;
    unsigned warnings_cut;             /* beyond the last slot, which says "(N more)" */
    char warnings[CMDLINE_MAX_WARNINGS][CMDLINE_WARNING_LEN];
};

/* usb.skip= controller kinds (PCI class 0C/03 programming interfaces). */
#define CMDLINE_USB_UHCI        1u
#define CMDLINE_USB_OHCI        2u
#define CMDLINE_USB_EHCI        4u
#define CMDLINE_USB_XHCI        8u
#define CMDLINE_USB_SETUP_MS    10000u       /* usb.setup_ms= default */
#define CMDLINE_SCREEN_MIN      320         /* screen.mode= pixels, each way */
#define CMDLINE_SCREEN_MAX      16384
#define CMDLINE_USB_SETUP_MAX   600000u
/* keyboard= values: both (default), legacy (PS/2 or the firmware's
 * emulation of it), usb (USB keyboards only: the i8042 is not touched). */
#define CMDLINE_KEYBOARD_BOTH   0
#define CMDLINE_KEYBOARD_LEGACY 1
#define CMDLINE_KEYBOARD_USB    2

#define DUMP_TO_SERIAL          1u
#define DUMP_TO_STICK           2u
#define DUMP_TO_NET             4u
/* trace.on_fault values, in the order of exception.h's enum on_fault. */
#define CMDLINE_ON_FAULT_DUMP   0
#define CMDLINE_ON_FAULT_FREEZE 1
#define CMDLINE_ON_FAULT_OFF    2
#define MAX_DUMP_AFTER_S        604800      /* a week */
/* trace.stream values, in the order of cmdline.def's names. */
#define CMDLINE_STREAM_OFF      0
#define CMDLINE_STREAM_NET      1

#define DEFAULT_TIMER_HZ        100
#define DEFAULT_TRACE_EVENTS    4096
#define MIN_TRACE_EVENTS        64
#define MAX_TRACE_EVENTS        (1u << 20)
#define MIN_TRACE_MEMORY        (64ull << 10)
#define MAX_TRACE_MEMORY        (1024ull << 30)

/* How a row of cmdline.def reads its value (cmdline.def says each). */
enum cmdline_kind {
    CMDLINE_FLAG,
    CMDLINE_OFF,
    CMDLINE_UINT,
    CMDLINE_POW2,
    CMDLINE_SIZE,
    CMDLINE_TEXT,
    CMDLINE_ENUM,
    CMDLINE_BITS,
    CMDLINE_CONSOLE,
    CMDLINE_USB_SKIP,
    CMDLINE_SCREEN,
    CMDLINE_NET_TO,
    CMDLINE_NET_IP,
    CMDLINE_NET_KEY,
};

/* One row of cmdline.def as the parser uses it (arg and help are the
 * docs', which tools/cmdline_check reads from the .def itself). */
struct cmdline_option {
    const char *name;
    uint8_t kind;          /* enum cmdline_kind */
    uint16_t offset, size; /* the field in struct boot_config */
    uint64_t lo, hi, init;
    const char *values, *dflt;
};
extern const struct cmdline_option cmdline_options[];
extern const unsigned cmdline_option_count;

/* What `o` takes, in words ("a number from 1 to 4096"): the messages' and
 * the docs' text. */
void cmdline_accepts(const struct cmdline_option *o, char *buf, size_t size);
/* Its default in words ("100", "dump", "none"; "" for FLAG and OFF). */
void cmdline_default(const struct cmdline_option *o, char *buf, size_t size);

/* Why the CPU an option names (debug.fault=, by CPU index) will never act
 * on it, or NULL when it will: CPU 0 is the boot CPU, which only serves
 * keys; `found` CPUs exist, the first `started` of them were sent
 * INIT/SIPI (the rest are parked), `online` tells whether `cpu` came up. */
const char *cmdline_cpu_never_runs(uint32_t cpu, uint32_t found, uint32_t started, bool online);

void cmdline_defaults(struct boot_config *cfg);
/* Apply `line` on top of the defaults; problems land in cfg->warnings. */
void cmdline_parse(const char *line, struct boot_config *cfg);
/* net.key=...'s value written over with '*' (the line is printed, and
 * the console goes over the network: the key must not). */
void cmdline_hide_key(char *line);

#endif
