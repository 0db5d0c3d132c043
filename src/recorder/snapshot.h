/* snapshot.h — a still image of every CPU's ring, for any reader (the
 * dump, `p`, `s`) and for clear.
 *
 * Readers:
 *   struct snapshot s;
 *   if (snapshot_take(&s)) { ... read s.rings[0..s.n) ...; snapshot_release(&s); }
 *
 * Taking one claims the rings (one reader at a time, on any CPU), pauses
 * tracing everywhere (trace_pause: writers already inside a trace point
 * finish first; one still unfinished after a bounded wait is excluded and
 * counted, and named in busy), names the CPUs that stopped answering
 * (cpuwatch.h) in silent, and copies every ring into its shadow, then
 * resumes at once: a dump that streams for half a minute pauses tracing
 * for a memcpy. All or nothing: either every online CPU's ring has a
 * shadow (copied = true) or none does, and then the live rings stay
 * paused until snapshot_release (the dump says snapshot=paused). The
 * taking CPU's interrupts are off for the pause and copy only.
 *
 * The claim nests on the CPU that holds it. A fault or NMI on that CPU
 * while it reads must not wait for itself: snapshot_held_here() tells,
 * snapshot_abandon() undoes the pause and the console lock the
 * interrupted reader held, so nothing deadlocks. */
#ifndef RECORDER_SNAPSHOT_H
#define RECORDER_SNAPSHOT_H
#include <stdbool.h>
#include <stdint.h>
#include "trace/ring.h"

/* How long a CPU waits for the reader before it without a sign of life.
 * A dump's length follows its size and transport (a 288-CPU dump over a
 * 115200-baud line takes many minutes), so the wait is not for the whole
 * dump: it goes on while the reader says it progresses
 * (snapshot_progress(), each line it writes) and ends only after this long
 * with no line written. Longer than a network dump's wait for its host's
 * confirmation (DUMPNET_WAIT_MAX_US, checked in dump.c). */
#define SNAPSHOT_CLAIM_US (90 * 1000000ull)

struct snapshot {
    struct ring **rings;            /* [n]; NULL for an offline CPU */
    unsigned n;                 /* CPU slots */
    bool copied;            /* shadows (tracing runs on), else paused */
    char silent[64];        /* CPUs that do not answer, "1,3" (cpuwatch.h) */
    char busy[64];          /* CPUs still inside a trace point after the wait */
    uint64_t pause_tsc;     /* copied: how long tracing was paused (TSC ticks) */
};

/* From the memory map, for ncpus CPUs: the readers' ring lists, and
 * shadow memory for rings of `capacity` events (after rings_init; 0: no
 * rings, no shadows); shadows all or nothing, said on the console when
 * memory is short. */
void snapshot_init(uint32_t capacity, uint32_t ncpus);

/* False (said on the console) when another reader kept the rings with no
 * progress for SNAPSHOT_CLAIM_US. */
bool snapshot_take(struct snapshot *s);
void snapshot_release(struct snapshot *s);

/* Run fn() with tracing paused and every ring quiescent (clear). */
void snapshot_paused(void (*fn)(void));

/* The reader claim alone (a dump of rings nobody writes, a fault's dump):
 * waits for the current reader as long as it progresses, and at most
 * wait_us after its last sign of progress. */
bool snapshot_claim(uint64_t wait_us);
/* The reader's sign of life while it holds the claim: a line written. */
void snapshot_progress(void);
void snapshot_unclaim(void);
bool snapshot_held_here(void);
void snapshot_abandon(void);
/* Tracing off, also for the reader that has it paused now (so that its
 * resume does not turn it back on): trace.on_fault=freeze. */
void snapshot_stop_tracing(void);

#endif
