# tools/: host programs made of the kernel's own code. They are not tests:
# the host tests and `make bench` run them (`make unit` builds them).
#   build/tools/gen_dump   real rings, the real encoder -> a dump on stdout
#   build/tools/gen_stick  the real dump-area code on image files
#   build/tools/cmdline_check  the kernel's option parser: scripts/netboot's --cmdline check
# Built like the unit tests, with sanitizers: the host tests drive the
# kernel's encoder and dump-area code through them with random and damaged
# input. (The ISO's dump area is formatted by an optimised build of
# gen_stick, $(BUILD)/host/gen_stick, in the GNUmakefile.)
TOOLCFLAGS         = $(filter-out -Itest/unit,$(HOSTCFLAGS))
DUMP_ENCODER_SRCS := src/recorder/encode.c src/recorder/schema.c src/recorder/predict.c src/trace/ring.c \
                     src/trace/trace.c src/lib/crc32.c src/recorder/dumpid.c src/lib/format.c
GEN_DUMP_SRCS     := tools/gen_dump.c $(DUMP_ENCODER_SRCS)
GEN_STICK_SRCS    := tools/gen_stick.c src/recorder/dumparea.c src/dev/parttable.c src/lib/crc32.c \
                     src/lib/kassert.c src/lib/format.c
CMDLINE_CHECK_SRCS := tools/cmdline_check.c src/firmware/cmdline.c src/lib/format.c
TOOLS             := $(BUILD)/tools/gen_dump $(BUILD)/tools/gen_stick $(BUILD)/tools/cmdline_check

$(BUILD)/tools/cmdline_check: $(CMDLINE_CHECK_SRCS) $(KHDRS) | check-tools
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(CC) $(TOOLCFLAGS) -o $@ $(CMDLINE_CHECK_SRCS)

$(BUILD)/tools/gen_dump: $(GEN_DUMP_SRCS) $(wildcard src/trace/*.h src/trace/*.def src/recorder/*.h src/recorder/*.def) | check-tools
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(CC) $(TOOLCFLAGS) -o $@ $(GEN_DUMP_SRCS)

$(BUILD)/tools/gen_stick: $(GEN_STICK_SRCS) tools/ramdisk.h $(KHDRS) | check-tools
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(CC) $(TOOLCFLAGS) -o $@ $(GEN_STICK_SRCS)

tools: $(TOOLS)
