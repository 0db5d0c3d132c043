/* uptime.c — the boot TSC. */
#include "time/uptime.h"
#include "arch/cpu.h"

static uint64_t boot_tsc;

void uptime_mark_boot(void) { boot_tsc = rdtsc(); }

uint64_t uptime_boot_tsc(void) { return boot_tsc; }
