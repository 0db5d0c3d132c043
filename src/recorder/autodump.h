/* autodump.h — dumps nobody asks for with a key, for PCs with neither a
 * keyboard nor someone at the serial line: trace.dump_after=SECONDS
 * dumps once that long after boot, and a workload started with dump=1
 * dumps when it finishes (perf/workload.c calls autodump_now). */
#ifndef RECORDER_AUTODUMP_H
#define RECORDER_AUTODUMP_H
#include <stdint.h>

/* trace.dump_after: 0 = never. */
void autodump_init(uint32_t seconds);
/* Boot CPU's idle loop: dumps once when the time has come. */
void autodump_poll(void);
/* Dump now, saying why on the console (trigger= in the dump). */
void autodump_now(const char *trigger, const char *why);

#endif
