/* test_persist.c — validation of the trace region kept across a warm
 * reset (src/trace/persist.c): a good region, a missing magic, a wrong
 * CRC, a region found elsewhere than it was written or cut short, a ring
 * whose constant part or counters were overwritten, and slots cleared or
 * scribbled over, which the snapshot must exclude rather than decode. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "trace/persist.h"
#include "trace/trace.h"

#define CPUS   2
#define CAP    64
#define EVENTS 40                   /* per CPU: the rings do not wrap */

static struct persist_header *h;
static uint64_t phys, size;

/* A fresh region as a boot leaves it: laid out, rings written, sealed. */
static void fresh(void)
{
    size = persist_size(CPUS, CAP);
    free(h);
    h = aligned_alloc(PERSIST_PAGE, size);
    memset(h, 0xA5, size);                      /* whatever RAM held before */
    phys = (uint64_t)(uintptr_t)h;
    persist_layout(h, phys, 7, CPUS, CAP);
    for (uint32_t c = 0; c < CPUS; c++) {
        struct ring *r = &persist_rings(h)[c];
        CHECK_EQ(ring_init(r, persist_slots(h, c), CAP, c), 0);
        for (uint64_t i = 0; i < EVENTS; i++)
            ring_write(r, 100 + i, (uint16_t)(1 + i % 3), 0, i, c);
        ring_write_pinned(r, 99, 1, 0, 5, 5);
    }
    persist_seal(h);
}

static uint64_t sent_by(uint32_t cpu, uint64_t *excluded)
{
    struct ring_snap s;
    struct trace_event ev;
    uint64_t seq, n = 0;
    ring_snap_begin(&s, &persist_rings(h)[cpu]);
    while (ring_snap_next(&s, &ev, &seq)) {
        CHECK_EQ(ev.cpu, cpu);
        CHECK(ev.type != 0);
        n++;
    }
    *excluded = s.excluded;
    return n;
}

static void test_good(void)
{
    fresh();
    CHECK_EQ(persist_check(h, phys, size), PERSIST_OK);
    CHECK_EQ(persist_check(h, phys, size + 4096), PERSIST_OK);
    for (uint32_t c = 0; c < CPUS; c++) {
        uint64_t ex;
        CHECK(persist_ring_ok(h, c));
        CHECK_EQ(sent_by(c, &ex), EVENTS + 1);
        CHECK_EQ(ex, 0);
    }
    CHECK(!strcmp(persist_verdict_name(PERSIST_OK), "intact"));
}

static void test_no_magic(void)
{
    fresh();
    h->magic = 0;                               /* cleared memory */
    CHECK_EQ(persist_check(h, phys, size), PERSIST_NONE);
    fresh();
    CHECK_EQ(persist_check(h, phys, sizeof *h - 1), PERSIST_NONE);   /* no room */
}

static void test_bad_crc(void)
{
    fresh();
    h->boot = 8;                                /* one field changed under the CRC */
    CHECK_EQ(persist_check(h, phys, size), PERSIST_BAD_CRC);
    fresh();
    persist_apic_ids(h)[1] ^= 1;
    CHECK_EQ(persist_check(h, phys, size), PERSIST_BAD_CRC);
    fresh();
    h->crc ^= 0x80;
    CHECK_EQ(persist_check(h, phys, size), PERSIST_BAD_CRC);
}

static void test_bad_layout(void)
{
    fresh();
    CHECK_EQ(persist_check(h, phys + 0x200000, size), PERSIST_BAD_LAYOUT);  /* moved */
    CHECK_EQ(persist_check(h, phys, size - 1), PERSIST_BAD_LAYOUT);          /* cut short */
    /* A header sealed with numbers that do not add up (a newer layout, or
     * a bug) is refused even though its CRC is right. */
    fresh();
    h->capacity = 48;
    persist_seal(h);
    CHECK_EQ(persist_check(h, phys, size), PERSIST_BAD_LAYOUT);
    fresh();
    h->ncpus = 0;
    persist_seal(h);
    CHECK_EQ(persist_check(h, phys, size), PERSIST_BAD_LAYOUT);
    fresh();
    h->ncpus = PERSIST_MAX_CPUS + 1;            /* tables beyond any sane size: not read */
    CHECK_EQ(persist_check(h, phys, size), PERSIST_BAD_LAYOUT);
}

/* Another layout version (v2 had 256-entry tables inside the header) is
 * named as such and never read past its version field. */
static void test_other_version(void)
{
    fresh();
    h->version = PERSIST_VERSION + 1;
    persist_seal(h);
    CHECK_EQ(persist_check(h, phys, size), PERSIST_OTHER_VERSION);
    fresh();
    h->version = 2;
    h->ncpus = 0xFFFFFFFFu;                     /* v2's fields mean other things */
    CHECK_EQ(persist_check(h, phys, sizeof *h), PERSIST_OTHER_VERSION);
    CHECK(strstr(persist_verdict_name(PERSIST_OTHER_VERSION), "another layout version"));
}

/* The tables grow with ncpus: 1024 CPUs, APIC ids up to 2^32-1, kept and
 * checked; the rings start after them. */
static void test_many_cpus(void)
{
    uint32_t n = 1024, cap = 8;
    uint64_t sz = persist_size(n, cap);
    struct persist_header *big = aligned_alloc(PERSIST_PAGE, sz);
    memset(big, 0x5A, sz);
    uint64_t at = (uint64_t)(uintptr_t)big;
    persist_layout(big, at, 1, n, cap);
    CHECK(big->rings_off >= sizeof *big + 8ull * n);
    for (uint32_t c = 0; c < n; c++) {
        CHECK_EQ(ring_init(&persist_rings(big)[c], persist_slots(big, c), cap, c), 0);
        persist_apic_ids(big)[c] = 0xFFFFFFFFu - c;
    }
    ring_write(&persist_rings(big)[1000], 5, 1, 0, 1, 2);
    persist_seal(big);
    CHECK_EQ(persist_check(big, at, sz), PERSIST_OK);
    CHECK_EQ(persist_apic_ids(big)[1023], 0xFFFFFFFFu - 1023);
    for (uint32_t c = 0; c < n; c++)
        CHECK(persist_ring_ok(big, c));
    struct ring_snap s;
    struct trace_event ev;
    uint64_t seq;
    ring_snap_begin(&s, &persist_rings(big)[1000]);
    CHECK(ring_snap_next(&s, &ev, &seq));
    CHECK_EQ(ev.cpu, 1000 & 0xFF);              /* the record keeps the low 8 bits */
    CHECK_EQ(persist_rings(big)[1000].cpu, 1000);
    persist_ring_crcs(big)[1023] ^= 1;
    CHECK_EQ(persist_check(big, at, sz), PERSIST_BAD_CRC);
    free(big);
}

static void test_damaged_ring(void)
{
    fresh();
    struct ring *r1 = &persist_rings(h)[1];
    r1->slots = persist_slots(h, 0);            /* constant part overwritten */
    CHECK_EQ(persist_check(h, phys, size), PERSIST_OK);
    CHECK(persist_ring_ok(h, 0));
    CHECK(!persist_ring_ok(h, 1));
    fresh();
    r1 = &persist_rings(h)[1];
    r1->base = r1->head + 1;                    /* counters that cannot be */
    CHECK(!persist_ring_ok(h, 1));
    fresh();
    r1 = &persist_rings(h)[1];
    r1->head = 1ull << 60;
    CHECK(!persist_ring_ok(h, 1));
    fresh();
    r1 = &persist_rings(h)[1];
    r1->head += PERSIST_MAX_INFLIGHT + 1;       /* thousands of writes in flight */
    CHECK(!persist_ring_ok(h, 1));
}

static void test_overwritten_slots(void)
{
    uint64_t ex;
    fresh();
    /* Cleared: the first 10 slots of CPU 0 read as zeros. Slot 0 then
     * claims seq 0, CPU 0, but type 0: excluded, not an event. */
    memset(persist_slots(h, 0), 0, 10 * sizeof(struct trace_event));
    CHECK(persist_ring_ok(h, 0));
    CHECK_EQ(sent_by(0, &ex), EVENTS + 1 - 10);
    CHECK_EQ(ex, 10);
    /* Scribbled: right seq, wrong CPU. */
    fresh();
    struct trace_event *s = persist_slots(h, 1);
    s[3].cpu = 0;
    s[4].seq += 1;
    CHECK_EQ(sent_by(1, &ex), EVENTS + 1 - 2);
    CHECK_EQ(ex, 2);
}

/* A wrapped ring whose oldest events survive only in the boot log. */
static struct ring *wrapped_with_boot_log(void)
{
    fresh();
    struct ring *r = &persist_rings(h)[0];
    ring_init(r, persist_slots(h, 0), CAP, 0);
    ring_write_pinned(r, 1, 1, 0, 0, 0);        /* seq 0, boot log entry 0 */
    for (uint64_t i = 0; i < 3 * CAP; i++)
        ring_write(r, 10 + i, 3, 0, i, 0);
    persist_seal(h);
    return r;
}

static void test_overwritten_boot_log(void)
{
    uint64_t ex;
    wrapped_with_boot_log();
    CHECK_EQ(sent_by(0, &ex), CAP + 1);         /* the window plus the boot log's */
    /* Entry 0 overwritten, and a done bit for an entry never written:
     * neither becomes an event; the seqs count as overwritten. */
    struct ring *r = wrapped_with_boot_log();
    r->pinned[0].id_word = 0;
    r->pinned_done |= 1ull << 5;
    CHECK_EQ(sent_by(0, &ex), CAP);
    CHECK_EQ(ex, 0);
}

int main(void)
{
    test_good();
    test_no_magic();
    test_bad_crc();
    test_bad_layout();
    test_other_version();
    test_many_cpus();
    test_damaged_ring();
    test_overwritten_slots();
    test_overwritten_boot_log();
    free(h);
    return check_summary("test_persist");
}
