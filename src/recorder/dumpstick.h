/* dumpstick.h — trace.dump_to=: each dump also goes to the dump area of the
 * stick baretrace booted from (dumparea.h), found among the registered
 * block devices (blockdev.h) by its partition type and this build's id.
 *
 * dump.c wraps its console sink: dumpstick_open() before the dump (it may
 * print, so the console must not be held yet) and dumpstick_close() after
 * it (says where the dump went, or why the stick did not get it). Lines
 * reach the stick exactly as the serial console gets them. */
#ifndef RECORDER_DUMPSTICK_H
#define RECORDER_DUMPSTICK_H
#include <stdbool.h>
#include "recorder/encode.h"

/* DUMP_TO_* bits from cmdline.h; 0 = both when a stick is found. */
void dumpstick_init(unsigned dump_to);
/* Turns *sink into one that also (or only) writes to the stick. The USB
 * driver serves the boot CPU only: a dump taken elsewhere (a fault on an
 * AP) skips the stick and says so. */
void dumpstick_open(struct dump_sink *sink, bool on_boot_cpu);
/* Whether a dump taken now (on the boot CPU or not) would go to the
 * stick: trace.dump_to= allows it and the dump area is found. */
bool dumpstick_would_take(bool on_boot_cpu);
void dumpstick_close(void);

#endif
