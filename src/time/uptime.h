/* uptime.h — the TSC at kernel entry, from which uptime counts.
 *
 * Kernel-level (not perf/): recorder/ (the `p` table, trace.dump_after=) and
 * perf/ (the `s` summary) both measure from it. */
#ifndef TIME_UPTIME_H
#define TIME_UPTIME_H
#include <stdint.h>

void uptime_mark_boot(void);       /* remember the TSC now (kmain's first act) */
uint64_t uptime_boot_tsc(void);        /* the TSC uptime_mark_boot read */

#endif
