/* dumpfacts.h — the %M items every dump carries (docs/dump-format.md):
 * facts from boot, set once, and the counters of the moment; a stream's
 * part 0 carries them too (stream.h). */
#ifndef RECORDER_DUMPFACTS_H
#define RECORDER_DUMPFACTS_H
#include <stdint.h>
#include "recorder/encode.h"

/* Facts from boot that every dump carries in its metadata. */
struct dump_facts {
    const char *fw;               /* "bios" | "uefi" */
    uint32_t found, parked, failed;
    uint64_t tsc_warp;
    int invariant_tsc;
    const char *tsc_src;
    uint32_t timer_hz;
    const char *tsc_check;        /* the clock that confirmed tsc_hz, or "none" */
};

void dump_set_facts(const struct dump_facts *f);
/* The %M items every dump carries, and a stream's part 0: the boot's
 * facts and the counters of the moment (uptime_tsc, capacity, ...). */
#define DUMP_FACT_EXTRAS 18
void dump_fact_extras(struct dump_extra x[DUMP_FACT_EXTRAS]);

#endif
