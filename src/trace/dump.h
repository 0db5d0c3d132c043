/* dump.h — the `d` hotkey: every CPU's ring over the console port in the
 * machine format of docs/dump-format.md, between a `DUMP BEGIN` and a
 * `DUMP END` line.
 *
 * Tracing is paused on every CPU (writers already inside a trace point
 * finish first; one still unfinished after a bounded wait is excluded and
 * counted) just long enough to copy every ring into its shadow; then it
 * resumes and the copy is streamed. Without shadow memory tracing stays
 * paused for the whole dump, and the dump says so (snapshot=paused).
 * The console is held for the stream so no other text can land inside the
 * dump; holding it does not disable interrupts (console.h), so the boot
 * CPU's timer keeps ticking, on time, through the whole transfer. */
#ifndef TRACE_DUMP_H
#define TRACE_DUMP_H
#include <stdbool.h>
#include <stdint.h>
#include "trace/ring.h"

/* Facts from boot that every dump carries in its metadata. */
struct dump_facts {
    const char *fw;               /* "bios" | "uefi" */
    uint32_t    found, parked, failed;
    uint64_t    tsc_warp;
    int         invariant_tsc;
    const char *tsc_src;
    uint32_t    timer_hz;
};

void     dump_set_facts(const struct dump_facts *f);
/* Write one dump; returns the events it held. */
uint64_t dump_all(void);
/* Run `fn` with tracing paused and every ring quiescent (used by clear). */
void     dump_with_rings_paused(void (*fn)(void));

/* A still image of every online CPU's ring for readers (dump, `p`, `s`):
 * copies when shadow memory exists (tracing runs on meanwhile), else the
 * live rings with tracing paused until dump_thaw(). rings[i] is NULL for
 * an offline CPU. */
struct frozen {
    struct ring *rings[MAX_CPUS];
    unsigned     n;
    uint32_t     saved_mask;
    bool         copied;
};
void dump_freeze(struct frozen *f);
void dump_thaw(struct frozen *f);

#endif
