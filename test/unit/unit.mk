# One line per host unit test: the kernel sources test/unit/test_X.c links.
# (Pure-logic files only: they must build for the host with -DHOST_BUILD.)
UNIT_SRCS_ring := src/trace/ring.c src/trace/trace.c
UNIT_SRCS_pairing := src/recorder/pairing.c src/recorder/schema.c src/trace/trace.c
UNIT_SRCS_encode := $(DUMP_ENCODER_SRCS)
$(BUILD)/unit/test_ring $(BUILD)/unit/test_encode: $(wildcard src/trace/*.h src/trace/*.def src/recorder/*.h src/recorder/*.def)
UNIT_SRCS_madt := src/firmware/madt.c
UNIT_SRCS_mb2 := src/firmware/mb2.c
# what the machine is (issue 30): SMBIOS, CPUID identity, boot=
UNIT_SRCS_smbios := src/firmware/smbios.c
UNIT_SRCS_cpuident := src/arch/cpuident.c
# the exception fixup table and rdmsr_safe/wrmsr_safe, faulting for real (SIGSEGV)
UNIT_SRCS_extable := src/arch/extable.c
UNIT_SRCS_bootdev := src/firmware/bootdev.c
UNIT_SRCS_cmdline := src/firmware/cmdline.c src/lib/format.c
UNIT_SRCS_format := src/lib/format.c
UNIT_SRCS_kassert := src/lib/kassert.c src/lib/format.c
UNIT_SRCS_tscmath := src/time/tscmath.c
UNIT_SRCS_deadline := src/time/deadline.c
# tsc.c is #included by its test (its CPUID made the test's), not linked
UNIT_SRCS_tsc := src/time/tscmath.c src/lib/median.c
$(BUILD)/unit/test_tsc: src/time/tsc.c
UNIT_SRCS_scancode := src/dev/scancode.c
UNIT_SRCS_median := src/lib/median.c
UNIT_SRCS_cpusum := src/perf/cpusum.c src/lib/median.c src/lib/format.c
UNIT_SRCS_bytes :=
UNIT_SRCS_pat := src/arch/pat.c
# perf/ (workloads and the benchmark): the pure parts
UNIT_SRCS_wlargs := src/perf/wlargs.c src/lib/format.c
UNIT_SRCS_stresssum :=
UNIT_SRCS_baselines := src/perf/baselines.c
UNIT_SRCS_fbdraw := src/console/fbdraw.c src/console/font8x16.c
# UARTs: the SPCR table and PCI serial controllers
UNIT_SRCS_spcr := src/console/spcr.c src/lib/format.c
UNIT_SRCS_uartpci := src/console/uartpci.c src/lib/format.c
# the 16550 opened while still sending (a register model in memory)
UNIT_SRCS_serial := src/console/serial.c src/lib/format.c src/lib/kstring.c
# the boot stick's dump area (#9 part 4): layout and partition tables
UNIT_SRCS_dumparea := src/recorder/dumparea.c src/lib/crc32.c src/lib/kassert.c src/lib/format.c
UNIT_SRCS_parttable := src/dev/parttable.c src/recorder/dumparea.c src/lib/crc32.c src/lib/kassert.c src/lib/format.c
UNIT_SRCS_dumpstick := src/recorder/dumpstick.c src/dev/blockdev.c src/dev/parttable.c src/recorder/dumparea.c src/lib/crc32.c src/lib/kassert.c src/lib/format.c
# the trace region kept across a warm reset: layout and validation
UNIT_SRCS_persist := src/trace/persist.c src/trace/ring.c src/trace/trace.c src/lib/crc32.c
# usb/: the pure parts of the USB stack
UNIT_SRCS_hid := src/usb/class/hidmap.c
UNIT_SRCS_usbdesc := src/usb/core/desc.c
UNIT_SRCS_msc := src/usb/class/bot.c src/usb/class/scsi.c
UNIT_SRCS_ehci_qh := src/usb/hc/ehci/ehci_qh.c
UNIT_SRCS_hubdesc := src/usb/core/hubdesc.c
UNIT_SRCS_uhci_td := src/usb/hc/uhci/uhci_td.c
UNIT_SRCS_ohci_ed := src/usb/hc/ohci/ohci_ed.c
$(BUILD)/unit/test_hid $(BUILD)/unit/test_usbdesc $(BUILD)/unit/test_msc $(BUILD)/unit/test_ehci_qh \
  $(BUILD)/unit/test_hubdesc $(BUILD)/unit/test_uhci_td $(BUILD)/unit/test_ohci_ed: $(wildcard src/usb/*.h src/usb/*/*.h src/usb/*/*/*.h)
UNIT_SRCS_decode := decoder/decode.c decoder/merge.c $(UNIT_SRCS_encode)
$(BUILD)/unit/test_decode: $(wildcard decoder/*.h)
UNIT_SRCS_kmerge := decoder/kmerge.c decoder/merge.c
$(BUILD)/unit/test_kmerge: $(wildcard decoder/*.h)
# net/: the frame parsers, the host protocol and the address state machine
UNIT_SRCS_netparse := src/net/eth.c src/net/arp.c src/net/ipv4.c src/net/udp.c src/net/dhcp.c \
                      src/net/netproto.c src/net/ipconf.c
UNIT_SRCS_siphash := src/lib/siphash.c src/net/netauth.c src/net/netproto.c src/lib/format.c
# net/netcon.c's receive and send paths over a fake stack: the proven host, the K counter's ceiling
UNIT_SRCS_netcon := src/net/netcon.c src/net/netauth.c src/net/netproto.c src/net/ipv4.c \
                    src/lib/siphash.c src/lib/format.c
# net/e1000.c against a register model (the parts QEMU does not emulate)
UNIT_SRCS_e1000 := src/net/e1000.c src/net/e1000desc.c src/time/deadline.c src/lib/format.c
# net/: NIC drivers' pure parts (issue 18)
UNIT_SRCS_virtq := src/net/virtq.c
UNIT_SRCS_rtl8111 := src/net/rtl8111.c
UNIT_SRCS_ecmdesc := src/usb/class/ecmdesc.c
UNIT_SRCS_ncm := src/usb/class/ncm.c
