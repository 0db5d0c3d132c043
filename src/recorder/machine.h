/* machine.h — what the machine is, said once at boot and in every dump.
 *
 * machine_init() reads the boot CPU's identity (arch/cpuident.h), the
 * SMBIOS strings and installed memory (firmware/smbiosfind.h; serial
 * numbers are never read) and how the kernel was booted
 * (firmware/bootdev.h). machine_print() writes the MACHINE line just
 * before READY (key="value" pairs, docs/console.md); every dump carries
 * the same items as its %I lines (docs/dump-format.md). A machine
 * without SMBIOS says smbios="none: WHY" and still dumps. */
#ifndef RECORDER_MACHINE_H
#define RECORDER_MACHINE_H
#include "firmware/mb2.h"
#include "recorder/encode.h"

void machine_init(const struct mb2_info *mb);
void machine_print(void);
/* The identity items for dump_meta.identity ([*n], static). */
const struct dump_extra *machine_items(unsigned *n);
/* READY's boot= value: net, cd, usb or unknown. */
const char *machine_boot(void);

#endif
