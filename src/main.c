/* main.c — the boot CPU's path from GRUB to READY, and each AP's after
 * bring-up. Read kmain() as the table of contents. */
#include "arch/cpu.h"
#include "arch/gdt.h"
#include "arch/idt.h"
#include "arch/lapic.h"
#include "arch/pat.h"
#include "arch/percpu.h"
#include "console/screen.h"
#include "console/serial.h"
#include "console/status.h"
#include "console/uartsel.h"
#include "cpus/cpuwatch.h"
#include "cpus/smp.h"
#include "cpus/tsc_sync.h"
#include "dev/inputpoll.h"
#include "dev/ioapic.h"
#include "dev/pci.h"
#include "dev/pic.h"
#include "firmware/acpi.h"
#include "firmware/cmdline.h"
#include "firmware/madt.h"
#include "firmware/mb2.h"
#include "hotkey.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "mm/mem.h"
#include "net/net.h"
#include "net/netcon.h"
#include "perf/workload.h"
#include "recorder/autodump.h"
#include "recorder/dump.h"
#include "recorder/dumpfacts.h"
#include "recorder/dumpid.h"
#include "recorder/dumpnet.h"
#include "recorder/dumpstick.h"
#include "recorder/exception.h"
#include "recorder/machine.h"
#include "recorder/prevboot.h"
#include "recorder/snapshot.h"
#include "recorder/stream.h"
#include "time/deadline.h"
#include "time/timer.h"
#include "time/tsc.h"
#include "time/uptime.h"
#include "trace/rings.h"
#include "trace/trace.h"
#include "usb/usbstack.h"

#define MB2_INFO_MAX  (1u << 20)
#define WARP_CHECK_US 20000

static struct mb2_info mb;
static struct boot_config cfg;
static struct madt_info madt;
static struct smp_summary smp;

static void read_boot_info(uint32_t magic, const void *info);
static void console_setup(void);
static void acpi_setup(void);
static uint32_t cpu_limit(void);
static __attribute__((noreturn)) void ap_online(uint32_t index);
static void trace_setup(void);
static void serial_irq_setup(void);
static void check_cpu_options(void);
static void debug_fault(uint32_t after_s);
static void keys_poll(void);
static void print_ready(void);
static __attribute__((noreturn)) void idle(void);

void kmain(uint32_t magic, const void *info)
{
    percpu_install(0);                      /* GS_BASE -> cpus[0] first */
    console_add_sink(serial_write, serial_present, CONSOLE_DUMP_LINES); /* keeps boot text */
    uptime_mark_boot();                     /* uptime counts from here */
    boot_phase(TRACE_PHASE_ENTRY, 0);       /* buffered until the ring exists */
    read_boot_info(magic, info);            /* multiboot2 tags, copied out */
    cmdline_parse(mb.cmdline, &cfg);        /* options; bad values -> warnings */
    cmdline_hide_key(mb.cmdline);           /* net.key's digits never printed */
    boot_phase(TRACE_PHASE_CMDLINE, cfg.warning_count);
    exception_set_on_fault((enum on_fault)cfg.on_fault);  /* trace.on_fault= */
    console_setup();                        /* legacy COM port, screen, banner */
    gdt_init_cpu(NULL);                     /* this CPU's GDT and TSS */
    pat_init();                             /* PAT entry 1: write combining (screen) */
    idt_init(exception_handle);             /* all 256 vectors; faults report */
    idt_load();
    pic_disable();                          /* 8259s remapped and masked */
    mem_init(&mb);                          /* allocator over the memory map */
    prevboot_find();                        /* the previous boot's rings, kept */
    boot_phase(TRACE_PHASE_MEMMAP, mem_available_bytes());
    acpi_setup();                           /* RSDP -> XSDT/RSDT -> MADT */
    boot_phase(TRACE_PHASE_ACPI, madt.enabled);
    machine_init(&mb);                      /* CPUID, SMBIOS, boot=: the MACHINE line */
    pci_scan();                             /* every PCI function, for the drivers */
    if (!cfg.screen_off)
        screen_report_adapter(pci_has_class(PCI_CLASS_DISPLAY)); /* no display at all? */
    uartsel_choose(&cfg);                   /* console=: SPCR, COM, PCI or MMIO UART */
    trace_setup();                          /* mask, per-CPU rings, BSP's ring */
    lapic_init(madt.lapic_addr);            /* BSP local APIC */
    boot_phase(TRACE_PHASE_LAPIC, lapic_id());
    tsc_init();                             /* TSC frequency, invariance */
    boot_phase(TRACE_PHASE_TSC_CALIBRATED, tsc_hz());
    timer_init(cfg.timer_hz);               /* LAPIC timer calibrated on the TSC */
    usb_init(&cfg);                         /* USB: before the APs (see usb/hc/xhci/xhci.h) */
    net_init(&cfg);                         /* NICs, link and address (bounded): net= */
    netcon_init(&cfg, boot_random(), boot_random(), boot_nonce());       /* console lines out, keys in; session code */
    boot_phase(TRACE_PHASE_SMP_START, 0);
    smp_start(&madt, cpu_limit(), &smp, ap_online); /* INIT/SIPI/SIPI, bounded wait */
    boot_phase(TRACE_PHASE_SMP_DONE, smp.online);
    check_cpu_options();                    /* debug.fault= names a CPU that runs? */
    timer_fit(smp.online, cfg.timer_hz_given);  /* under TCG: ticks the emulator can serve */
    smp_release();                          /* APs join the warp check */
    tsc_sync_run(smp.online, tsc_from_us(WARP_CHECK_US));
    trace(TSC_WARP, tsc_sync_warp_cpu(), tsc_sync_worst_warp());
    timer_start_cpu();                      /* BSP ticks too */
    boot_phase(TRACE_PHASE_TIMER_START, timer_hz());
    rings_keep_facts(tsc_hz());             /* TSC rate, APIC ids for the next boot */
    hotkey_init(cfg.keyboard);              /* PS/2 keyboard, if any (keyboard=) */
    inputpoll_set(keys_poll);               /* keys (and a stream) inside long workloads */
    dumpstick_init(cfg.dump_to);            /* trace.dump_to=: dumps to the boot stick too */
    dumpnet_init(cfg.dump_to);              /* and over the network */
    stream_init(cfg.stream);                /* trace.stream=: from idle(), once the net is up */
    serial_irq_setup();                     /* ISA UART input by interrupt, else polled */
    print_ready();                          /* the one READY line */
    hotkey_help();
    workload_boot(cfg.workload);            /* workload=: runs from idle() */
    autodump_init(cfg.dump_after_s);        /* trace.dump_after=: from idle() */
    boot_phase(TRACE_PHASE_READY, 0);
    idle();
}

/* An AP after smp.c has installed its per-CPU state. */
static __attribute__((noreturn)) void ap_online(uint32_t index)
{
    rings_attach(index);                    /* first: everything after is traced */
    trace(AP_ONLINE, index, cpus[index].apic_id);
    smp_wait_release();
    tsc_sync_run(smp.online, tsc_from_us(WARP_CHECK_US));
    timer_start_cpu();
    if (cfg.fault_cpu == (int32_t)index)
        debug_fault(cfg.fault_after_s);     /* debug.fault=: exercise the report */
    if (cfg.hang_cpu == (int32_t)index)
        cpuwatch_hang();                    /* debug.hang=: a CPU that never answers */
    idle();
}

static void read_boot_info(uint32_t magic, const void *info)
{
    const char *why = "not started by a multiboot2 boot loader";
    cmdline_defaults(&cfg);
    if (magic == MB2_BOOTLOADER_MAGIC && mb2_parse(info, MB2_INFO_MAX, &mb, &why))
        return;
    serial_init(0, SERIAL_DEFAULT_BAUD);
    kprintf("baretrace: %s (magic 0x%x); halting\n", why, magic);
    cpu_park();
}

static void console_setup(void)
{
    uartsel_early(&cfg);                    /* the rest once ACPI and PCI are up */
    if (cfg.screen_off)
        kprintf("screen: off (screen=off): UART only\n");
    else if (screen_init(&mb.fb))
        console_add_sink(screen_write, NULL, 0);  /* a dump's progress, not its lines */
    status_update();                        /* the status rows, drawn with the boot text */
    kprintf("\nbaretrace: booted by %s (%s), cmdline \"%s\"\n",
            mb.loader[0] ? mb.loader : "unknown loader", mb.efi ? "UEFI" : "BIOS", mb.cmdline);
    for (unsigned i = 0; i < cfg.warning_count; i++)
        kprintf("%s\n", cfg.warnings[i]);
    if (mb.cmdline_truncated || mb.mmap_truncated)
        kprintf("boot: command line or memory map truncated to fit\n");
    if (cfg.screen_w && !cfg.screen_off)
        screen_check_mode(cfg.screen_w, cfg.screen_h);  /* screen.mode=: did GRUB set it? */
}

static void acpi_setup(void)
{
    const char *why = "no MADT";
    const struct acpi_sdt *t = acpi_init(&mb) ? acpi_find("APIC") : NULL;
    if (t && madt_parse((const uint8_t *)t, t->length, &madt, &why)) {
        if (madt.enabled > madt.stored)
            kprintf("acpi: MADT lists %u CPUs; only the first %u are considered\n",
                    madt.enabled, madt.stored);
        if (madt.repeated || madt.invalid)
            kprintf("acpi: MADT lists %u CPUs a second time (counted once) and %u with the "
                    "x2APIC broadcast ID (no CPU)\n",
                    madt.repeated, madt.invalid);
        return;
    }
    kprintf("acpi: %s; running on the boot CPU only\n", why);
    madt.lapic_addr = 0xFEE00000;
}

static uint32_t cpu_limit(void)
{
    uint32_t limit = MAX_CPUS;
    if (cfg.maxcpus && cfg.maxcpus < limit)
        limit = cfg.maxcpus;
    return cfg.nosmp ? 1 : limit;
}

static void trace_setup(void)
{
    uint32_t cats = TRACE_CATS_ALL;
    const char *bad;
    size_t bad_len;
    if (cfg.trace_mask[0] &&
        trace_parse_mask(cfg.trace_mask, sizeof cfg.trace_mask, &cats, &bad, &bad_len)) {
        kprintf("cmdline: trace.mask=%s: unknown category '%.*s' (known: all none", cfg.trace_mask,
                (int)bad_len, bad);
        for (unsigned b = 0; trace_category_name(b); b++)
            kprintf(" %s", trace_category_name(b));
        kprintf("); using all\n");
        cats = TRACE_CATS_ALL;
    }
    trace_set_mask((cfg.trace_off ? 0 : TRACE_ENABLE) | cats);
    /* A ring for each CPU that may run (none listed: the boot CPU alone). */
    uint32_t n = madt.enabled < cpu_limit() ? madt.enabled : cpu_limit();
    n = n ? n : 1;
    bool traced = rings_init(cfg.trace_events, cfg.trace_memory, n, prevboot_next_boot(),
                             prevboot_kept_bytes());
    snapshot_init(traced ? rings_capacity() : 0, n);  /* shadows: dumps pause for a copy only */
    rings_attach(0);
}

static void serial_irq_setup(void)
{
    if (!serial_present())
        return;
    if (serial_isa_irq() == SERIAL_NO_IRQ) {
        kprintf("serial: %s has no ISA IRQ (routing a PCI or MMIO UART's needs ACPI AML); "
                "input is polled at each tick\n",
                serial_name());
        return;
    }
    if (!ioapic_route_isa(&madt, serial_isa_irq(), VEC_SERIAL, lapic_id())) {
        kprintf("serial: no I/O APIC route for IRQ %u; input is polled at each tick\n",
                serial_isa_irq());
        return;
    }
    serial_irq_enable(VEC_SERIAL);
}

/* What the keys CPU polls inside a long workload (stress): the keys, and
 * a stream's parts, so that a stream goes on under fire. */
static void keys_poll(void)
{
    hotkey_poll();
    stream_poll();
}

/* debug.fault=: ud2 now, or after_s seconds from now (ticks wake the
 * wait; the CPU runs no workload job meanwhile). */
static void debug_fault(uint32_t after_s)
{
    struct deadline end = deadline_in_us(after_s * 1000000ull);
    if (after_s)
        irq_enable();                       /* its ticks wake the halts below */
    while (after_s && !deadline_passed(end))
        cpu_halt();
    __asm__ volatile("ud2");
}

static void check_cpu_options(void)
{
    if (cfg.fault_cpu < 0)
        return;
    uint32_t cpu = (uint32_t)cfg.fault_cpu;
    const char *why = cmdline_cpu_never_runs(cpu, smp.found, smp.slots,
                                             cpu < MAX_CPUS && cpus[cpu].online);
    if (why)
        kprintf("cmdline: debug.fault=%u: %s (%u found, %u online); no fault\n", cpu, why,
                smp.found, smp.online);
}

static void print_ready(void)
{
    struct dump_facts f = { mb.efi ? "uefi" : "bios", smp.found, smp.parked, smp.failed,
                            tsc_sync_worst_warp(), tsc_invariant(), tsc_source(), timer_hz(),
                            tsc_check() };
    dump_set_facts(&f);
    char net[64], line[320];
    net_ready_fields(net, sizeof net);
    machine_print();                        /* what the machine is, beside READY */
    ksnprintf(line, sizeof line, "READY cpus=%u found=%u max=%u parked=%u failed=%u tsc_hz=%lu tsc_src=%s "
                                 "invariant_tsc=%u tsc_warp=%lu x2apic=%u timer_hz=%u fw=%s console=%s prev_events=%lu"
                                 " %s boot=%s tsc_check=%s",
              smp.online, smp.found, MAX_CPUS, smp.parked, smp.failed, tsc_hz(), tsc_source(),
              tsc_invariant(), tsc_sync_worst_warp(), lapic_x2apic(), timer_hz(),
              mb.efi ? "uefi" : "bios", serial_name(), prevboot_events(), net, machine_boot(),
              tsc_check());
    kprintf("%s\n", line);
    netcon_set_ready(line);                 /* and announced over the network */
}

static __attribute__((noreturn)) void idle(void)
{
    irq_enable();                           /* keys (a dump) run with interrupts on */
    for (;;) {
        bool keys = this_cpu()->index == exception_keys_cpu();   /* the BSP, unless it faulted */
        if (keys) {
            hotkey_poll();                  /* serial, PS/2 and USB keys */
            autodump_poll();                /* trace.dump_after= */
            stream_poll();                  /* a stream's parts: taken, sent, confirmed */
            status_poll();                  /* redraw the screen, a few times a second */
        }
        irq_disable();                      /* a wake-up IPI now ends the hlt below */
        workload_poll();                    /* jobs posted to this CPU (perf/oncpu.h) */
        if (keys)
            hotkey_wait();                  /* the next tick, or 10 ms at a slow timer_hz */
        else {
            irq_enable();
            cpu_halt();                     /* sti; hlt: woken by the next tick */
        }
    }
}
