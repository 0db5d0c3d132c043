/* dump.h — the `d` hotkey: every CPU's ring over the console port in the
 * machine format of docs/dump-format.md, between a `DUMP BEGIN` and a
 * `DUMP END` line.
 *
 * Tracing is paused on every CPU for the dump (writers already inside a
 * trace point finish first; one still unfinished after a bounded wait is
 * excluded and counted), the console is held so no other text can land
 * inside the dump, and tracing resumes as it was. */
#ifndef TRACE_DUMP_H
#define TRACE_DUMP_H
#include <stdint.h>

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

#endif
