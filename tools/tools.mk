# tools/: host programs made of the kernel's own code. They are not tests:
# the host tests and `make bench` run them (`make unit` builds them).
#   build/tools/gen_dump   real rings, the real encoder -> a dump on stdout
#   build/tools/gen_stick  the real dump-area code on image files
# Built like the unit tests, with sanitizers: the host tests drive the
# kernel's encoder and dump-area code through them with random and damaged
# input. (The ISO's dump area is formatted by an optimised build of
# gen_stick, $(BUILD)/host/gen_stick, in the GNUmakefile.)
TOOLCFLAGS         = $(filter-out -Itest/unit,$(HOSTCFLAGS))
DUMP_ENCODER_SRCS := src/trace/encode.c src/trace/schema.c src/trace/predict.c src/trace/ring.c \
                     src/trace/trace.c src/trace/crc32.c src/trace/dumpid.c src/format.c
GEN_DUMP_SRCS     := tools/gen_dump.c $(DUMP_ENCODER_SRCS)
GEN_STICK_SRCS    := tools/gen_stick.c src/trace/dumparea.c src/parttable.c src/trace/crc32.c \
                     src/kassert.c src/format.c
TOOLS             := $(BUILD)/tools/gen_dump $(BUILD)/tools/gen_stick

$(BUILD)/tools/gen_dump: $(GEN_DUMP_SRCS) $(wildcard src/trace/*.h src/trace/*.def) | check-tools
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(CC) $(TOOLCFLAGS) -o $@ $(GEN_DUMP_SRCS)

$(BUILD)/tools/gen_stick: $(GEN_STICK_SRCS) tools/ramdisk.h $(wildcard src/*.h src/trace/*.h) | check-tools
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(CC) $(TOOLCFLAGS) -o $@ $(GEN_STICK_SRCS)

tools: $(TOOLS)
