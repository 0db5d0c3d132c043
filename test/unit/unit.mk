# One line per host unit test: the kernel sources test/unit/test_X.c links.
# (Pure-logic files only: they must build for the host with -DHOST_BUILD.)
UNIT_SRCS_ring := src/trace/ring.c src/trace/trace.c
UNIT_SRCS_pairing := src/trace/pairing.c src/trace/schema.c src/trace/trace.c
UNIT_SRCS_encode := $(DUMP_ENCODER_SRCS)
$(BUILD)/unit/test_ring $(BUILD)/unit/test_encode: $(wildcard src/trace/*.h src/trace/*.def)
UNIT_SRCS_madt := src/madt.c
UNIT_SRCS_mb2 := src/mb2.c
UNIT_SRCS_cmdline := src/cmdline.c src/format.c
UNIT_SRCS_format := src/format.c
UNIT_SRCS_kassert := src/kassert.c src/format.c
UNIT_SRCS_tscmath := src/tscmath.c
UNIT_SRCS_scancode := src/scancode.c
UNIT_SRCS_median := src/median.c
UNIT_SRCS_bytes :=
# perf/ (workloads and the benchmark): the pure parts
UNIT_SRCS_wlargs := src/perf/wlargs.c src/format.c
UNIT_SRCS_stresssum :=
UNIT_SRCS_baselines := src/perf/baselines.c
UNIT_SRCS_fbdraw := src/fbdraw.c src/font8x16.c
# UARTs: the SPCR table and PCI serial controllers
UNIT_SRCS_spcr := src/spcr.c src/format.c
UNIT_SRCS_uartpci := src/uartpci.c src/format.c
# the boot stick's dump area (#9 part 4): layout and partition tables
UNIT_SRCS_dumparea := src/trace/dumparea.c src/trace/crc32.c src/kassert.c src/format.c
UNIT_SRCS_parttable := src/parttable.c src/trace/dumparea.c src/trace/crc32.c src/kassert.c src/format.c
UNIT_SRCS_dumpstick := src/trace/dumpstick.c src/blockdev.c src/parttable.c src/trace/dumparea.c src/trace/crc32.c src/kassert.c src/format.c
# the trace region kept across a warm reset: layout and validation
UNIT_SRCS_persist := src/trace/persist.c src/trace/ring.c src/trace/trace.c src/trace/crc32.c
# usb/: the pure parts of the USB stack
UNIT_SRCS_hid := src/usb/hidmap.c
UNIT_SRCS_usbdesc := src/usb/desc.c
UNIT_SRCS_msc := src/usb/bot.c src/usb/scsi.c
$(BUILD)/unit/test_hid $(BUILD)/unit/test_usbdesc $(BUILD)/unit/test_msc: $(wildcard src/usb/*.h)
UNIT_SRCS_decode := src/host/decode.c src/host/merge.c $(UNIT_SRCS_encode)
$(BUILD)/unit/test_decode: $(wildcard src/host/*.h)
UNIT_SRCS_kmerge := src/host/kmerge.c src/host/merge.c
$(BUILD)/unit/test_kmerge: $(wildcard src/host/*.h)
