/* rings.h — the per-CPU trace rings: memory, attachment, boot phases.
 *
 * rings_init() takes each CPU's event buffer from the memory map (one
 * cache-line-aligned block per CPU, so no two CPUs share a line) before
 * any AP starts; each CPU then attaches its own ring (gs:8) as its first
 * act. Boot phases passed before the rings exist are remembered with
 * their TSC and recorded, with that TSC, the moment the BSP's ring is up:
 * the trace starts at the first C instruction.
 *
 * The rings, their counters and boot logs live in one region of memory
 * that the next boot recognises after a warm reset (persist.h,
 * prevboot.h).
 *
 * Readers never touch these rings while they are written: they take a
 * snapshot (snapshot.h), which owns the shadow copies. */
#ifndef TRACE_RINGS_H
#define TRACE_RINGS_H
#include <stdbool.h>
#include <stdint.h>
#include "trace/ring.h"

/* A kept trace survives a warm reset at or above this address only
 * (firmware and GRUB reuse memory below it: QEMU's SeaBIOS and OVMF both). */
#define RINGS_KEEP_FLOOR 0x2000000ull

#define RING_MAX_EVENTS  (1u << 20)   /* the most events per CPU trace.memory= gives */

/* Allocate `events` per CPU for `ncpus` CPUs, or when `memory` (bytes) is
 * not 0 that much in all, split evenly (a power of two each), in a region
 * that survives a warm reset (persist.h), numbered `boot`; falls back to
 * smaller rings (and says so) when memory cannot hold the rings and what
 * the rest of the boot needs (the dump shadows, snapshot.h, come from what
 * is left). Says on the console how many events and bytes the rings took. `kept_bytes`: memory
 * the previous boot's trace holds (prevboot.h), named when it is why the
 * rings shrink. A region that fits only below RINGS_KEEP_FLOOR, where
 * firmware and GRUB reuse memory at a reset, is used, and the console says
 * that a warm reset may not keep it. False if none fit. */
bool rings_init(uint32_t events, uint64_t memory, uint32_t ncpus, uint64_t boot,
                uint64_t kept_bytes);
/* Record the TSC rate and APIC ids in the region's header (after SMP). */
void rings_keep_facts(uint64_t tsc_hz);
uint32_t rings_capacity(void);
uint32_t rings_asked(void);             /* events per CPU the options asked for */
uint64_t rings_bytes(void);             /* event slots of all rings, bytes */
/* Point the calling CPU's gs:8 at its ring (CPU `index`). */
void rings_attach(uint32_t index);
struct ring *rings_of(uint32_t index);      /* NULL when that CPU has none */
/* Events recorded and overwritten since the last clear, summed over the
 * online CPUs, read without a pause (slightly stale is fine): the
 * screen's status area (status.h). */
void rings_event_counts(uint64_t *recorded, uint64_t *overwritten);

/* Record boot phase `phase` (TRACE_PHASE_x) with `value` now, or as soon
 * as the BSP's ring exists. */
void boot_phase(unsigned phase, uint64_t value);

#endif
