/* persist.h — the layout of the trace memory that survives a warm reset
 * (like Linux pstore/ramoops), and its validation. Pure code, tested on
 * the host (test/unit/test_persist.c).
 *
 * One region, placed by rings.c where the next boot finds it (mem.h):
 *
 *     offset 0          struct persist_header (magic, boot number, CRCs),
 *                       then its tables: u32 apic_ids[ncpus], u32 ring_crc[ncpus]
 *     rings_off         struct ring[ncpus]: counters and boot logs
 *     slots_off         ncpus * capacity events, CPU i's at
 *                       slots_off + i * capacity * 32
 *
 * The header and each ring's constant part (where its slots are, their
 * number, its CPU) are covered by CRC-32s written once at set-up; a ring's
 * counters change with every event and cannot be, so they are only
 * checked for being consistent. Events themselves are validated one by
 * one by the snapshot reader (their seq, CPU and type, ring.h): whatever
 * the next boot finds damaged is left out and counted, never invented. */
#ifndef TRACE_PERSIST_H
#define TRACE_PERSIST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace/ring.h"

#define PERSIST_MAGIC        0x50454B4543415254ull   /* "TRACEKEP" little-endian */
/* PERSIST_VERSION 2: struct ring gained the results log; 3: the per-CPU
 * tables follow the header, ncpus entries each (was 256 fixed). */
#define PERSIST_VERSION      3
#define PERSIST_MAX_CPUS     65536    /* a sane header's ncpus, at most */
#define PERSIST_PAGE         4096
#define PERSIST_MAX_INFLIGHT 256   /* head - commit of a sane ring: nesting depth */

struct persist_header {
    uint64_t magic;
    uint32_t version;
    uint32_t header_bytes;         /* the header with its tables: 80 + 8 * ncpus */
    uint64_t phys;                 /* where this boot put it: must be where it is found */
    uint64_t size;                 /* whole region, bytes */
    uint64_t boot;                 /* 1 after a cold boot, +1 for each warm reset seen */
    uint64_t tsc_hz;               /* 0 until known */
    uint32_t ncpus, capacity;
    uint64_t rings_off, slots_off;
    uint32_t crc;                  /* this header and its tables, with crc = 0 */
    uint32_t pad;
    /* u32 apic_ids[ncpus], u32 ring_crc[ncpus] (each ring's constant part):
     * persist_apic_ids(), persist_ring_crcs() */
};

/* The next boot reads this header from memory this boot wrote: its layout
 * is the format (PERSIST_VERSION), so it must not move silently. */
_Static_assert(offsetof(struct persist_header, version) == 8,
               "persist_header: the version where every version had it");
_Static_assert(offsetof(struct persist_header, crc) == 72, "persist_header: 72 bytes of facts");
_Static_assert(sizeof(struct persist_header) == 80, "persist_header: crc and pad end it");

enum persist_verdict {
    PERSIST_OK,
    PERSIST_NONE,                  /* no magic: never written, cleared or overwritten */
    PERSIST_BAD_CRC,               /* magic but the header's CRC fails */
    PERSIST_BAD_LAYOUT,            /* CRC good but the numbers do not add up */
    PERSIST_OTHER_VERSION,         /* magic, but another PERSIST_VERSION's layout */
};

/* Bytes a region for ncpus rings of `capacity` events needs. */
uint64_t persist_size(uint32_t ncpus, uint32_t capacity);
/* Writes the header of a new region at `h` (physical address `phys`)
 * without its magic and CRCs: call persist_seal once the rings exist. */
void persist_layout(struct persist_header *h, uint64_t phys, uint64_t boot,
                    uint32_t ncpus, uint32_t capacity);
struct ring *persist_rings(struct persist_header *h);
struct trace_event *persist_slots(struct persist_header *h, uint32_t cpu);
/* The header's tables (ncpus entries each). */
uint32_t *persist_apic_ids(const struct persist_header *h);
uint32_t *persist_ring_crcs(const struct persist_header *h);
/* Computes the ring CRCs and the header CRC, then writes the magic. */
void persist_seal(struct persist_header *h);

/* Is the header at `h`, found at physical address `phys` with `room`
 * bytes of usable memory from there on, a region a boot wrote? */
enum persist_verdict persist_check(const struct persist_header *h, uint64_t phys, uint64_t room);
const char *persist_verdict_name(enum persist_verdict v);
/* Is ring `cpu` of a checked region intact enough to read: its constant
 * part matches its CRC and where the header says it is, and its counters
 * are consistent? */
bool persist_ring_ok(const struct persist_header *h, uint32_t cpu);

#endif
