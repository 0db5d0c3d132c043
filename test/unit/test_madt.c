/* test_madt.c — MADT parsing from table bytes. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "firmware/madt.h"

static uint8_t t[1024];
static size_t len;

static void begin(void)
{
    memset(t, 0, sizeof t);
    memcpy(t, "APIC", 4);
    uint32_t lapic = 0xFEE00000, flags = 1;
    memcpy(t + 36, &lapic, 4);
    memcpy(t + 40, &flags, 4);
    len = 44;
}

static void entry(const void *e, size_t n)
{
    memcpy(t + len, e, n);
    len += n;
}

static void lapic(uint8_t uid, uint8_t id, uint32_t flags)
{
    uint8_t e[8] = { 0, 8, uid, id };
    memcpy(e + 4, &flags, 4);
    entry(e, 8);
}

static void x2apic(uint32_t id, uint32_t uid, uint32_t flags)
{
    uint8_t e[16] = { 9, 16 };
    memcpy(e + 4, &id, 4);
    memcpy(e + 8, &flags, 4);
    memcpy(e + 12, &uid, 4);
    entry(e, 16);
}

static void finish(void)
{
    uint32_t l = (uint32_t)len;
    memcpy(t + 4, &l, 4);
}

static void test_gaps_and_flags(void)
{
    struct madt_info m;
    const char *why = NULL;
    begin();
    for (uint8_t id = 0; id < 6; id++) lapic(id, id, 1);
    for (uint8_t id = 8; id < 14; id++) lapic(id, id, 1);   /* gap at 6, 7 */
    lapic(20, 20, 2);                                         /* online capable */
    lapic(21, 21, 0);                                         /* disabled */
    uint8_t ioapic[12] = { 1, 12 };                           /* skipped */
    entry(ioapic, 12);
    finish();
    CHECK(madt_parse(t, len, &m, &why));
    CHECK_EQ(m.enabled, 12);
    CHECK_EQ(m.stored, 12);
    CHECK_EQ(m.online_capable, 1);
    CHECK_EQ(m.disabled, 1);
    CHECK_EQ(m.cpus[6].apic_id, 8);
    CHECK_EQ(m.lapic_addr, 0xFEE00000u);
    CHECK(m.pcat_compat);
}

static void test_x2apic_and_override(void)
{
    struct madt_info m;
    const char *why = NULL;
    begin();
    lapic(0, 0, 1);
    x2apic(300, 7, 1);
    uint8_t ov[12] = { 5, 12 };
    uint64_t addr = 0xFED00000ull;
    memcpy(ov + 4, &addr, 8);
    entry(ov, 12);
    finish();
    CHECK(madt_parse(t, len, &m, &why));
    CHECK_EQ(m.enabled, 2);
    CHECK_EQ(m.cpus[1].apic_id, 300);
    CHECK(m.cpus[1].x2apic);
    CHECK_EQ(m.cpus[1].uid, 7);
    CHECK_EQ(m.lapic_addr, 0xFED00000ull);
}

static void test_ioapic_and_overrides(void)
{
    struct madt_info m;
    const char *why = NULL;
    begin();
    lapic(0, 0, 1);
    uint8_t io[12] = { 1, 12, 2, 0 };
    uint32_t addr = 0xFEC00000, base = 0;
    memcpy(io + 4, &addr, 4);
    memcpy(io + 8, &base, 4);
    entry(io, 12);
    uint8_t iso[10] = { 2, 10, 0, 0, 2, 0, 0, 0, 0x0F, 0 };   /* IRQ0 -> GSI2, low, level */
    entry(iso, 10);
    uint8_t other_bus[10] = { 2, 10, 1, 4, 9, 0, 0, 0, 0, 0 };  /* not ISA: ignored */
    entry(other_bus, 10);
    finish();
    CHECK(madt_parse(t, len, &m, &why));
    CHECK_EQ(m.ioapics, 1);
    CHECK_EQ(m.ioapic[0].id, 2);
    CHECK_EQ(m.ioapic[0].addr, 0xFEC00000u);
    CHECK_EQ(m.overrides, 1);
    CHECK_EQ(m.override[0].irq, 0);
    CHECK_EQ(m.override[0].gsi, 2);
    CHECK_EQ(m.override[0].flags, 0x0F);
}

static void test_malformed(void)
{
    struct madt_info m;
    const char *why = NULL;
    begin();
    lapic(0, 0, 1);
    t[len] = 0;                     /* an entry claiming 40 bytes past the end */
    t[len + 1] = 40;
    len += 2;
    finish();
    CHECK(!madt_parse(t, len, &m, &why));
    CHECK(why && strstr(why, "overruns"));
    begin();
    t[len] = 0;                     /* zero-length entry: would loop forever */
    t[len + 1] = 0;
    len += 8;
    finish();
    CHECK(!madt_parse(t, len, &m, &why));
    begin();
    finish();
    memcpy(t, "FACP", 4);
    CHECK(!madt_parse(t, len, &m, &why));
    CHECK(!madt_parse(t, 10, &m, &why));
}

/* A big machine: 255 type-0 CPUs, then type-9 CPUs with sparse 32-bit
 * IDs (steps of 4099 from 256: sockets far apart), MADT_MAX_CPUS + 10 in
 * all: every one counted, the first MADT_MAX_CPUS kept, in table order. */
static void test_cap(void)
{
    enum { LOW = 255,
           N = MADT_MAX_CPUS + 10 };
    static uint8_t big[44 + 8 * LOW + 16 * (N - LOW)];
    struct madt_info m;
    const char *why;
    memset(big, 0, sizeof big);
    memcpy(big, "APIC", 4);
    uint32_t l = sizeof big;
    memcpy(big + 4, &l, 4);
    size_t off = 44;
    for (size_t i = 0; i < LOW; i++, off += 8) {
        uint8_t *e = big + off;
        e[0] = 0;
        e[1] = 8;
        e[2] = (uint8_t)i;
        e[3] = (uint8_t)i;
        e[4] = 1;
    }
    for (size_t i = LOW; i < N; i++, off += 16) {
        uint8_t *e = big + off;
        uint32_t id = 256 + (uint32_t)(i - LOW) * 4099u, flags = 1, uid = (uint32_t)i;
        e[0] = 9;
        e[1] = 16;
        memcpy(e + 4, &id, 4);
        memcpy(e + 8, &flags, 4);
        memcpy(e + 12, &uid, 4);
    }
    CHECK_EQ(off, sizeof big);
    CHECK(madt_parse(big, sizeof big, &m, &why));
    CHECK_EQ(m.enabled, N);
    CHECK_EQ(m.stored, MADT_MAX_CPUS);
    CHECK_EQ(m.repeated, 0);
    CHECK_EQ(m.cpus[254].apic_id, 254);
    CHECK(!m.cpus[254].x2apic);
    CHECK_EQ(m.cpus[255].apic_id, 256);
    CHECK(m.cpus[255].x2apic);
    CHECK_EQ(m.cpus[MADT_MAX_CPUS - 1].apic_id, 256 + (MADT_MAX_CPUS - 1 - LOW) * 4099u);
    CHECK_EQ(m.cpus[MADT_MAX_CPUS - 1].uid, MADT_MAX_CPUS - 1);
}

/* x2APIC IDs across the whole 32-bit range, a CPU listed as both type 0
 * and type 9, the broadcast ID, disabled type-9 entries. */
static void test_x2apic_sparse_ids(void)
{
    struct madt_info m;
    const char *why = NULL;
    begin();
    lapic(0, 0, 1);
    lapic(1, 2, 1);
    x2apic(2, 1, 1);                  /* CPU 2 again, as x2APIC: one CPU */
    x2apic(255, 30, 1);
    x2apic(0x10000, 31, 1);
    x2apic(0xFFFFFFFEu, 32, 1);       /* the highest CPU ID there is */
    x2apic(0xFFFFFFFFu, 33, 1);       /* broadcast: not a CPU */
    x2apic(70000, 34, 2);             /* online capable */
    x2apic(70001, 35, 0);             /* disabled */
    finish();
    CHECK(madt_parse(t, len, &m, &why));
    CHECK_EQ(m.enabled, 5);
    CHECK_EQ(m.stored, 5);
    CHECK_EQ(m.repeated, 1);
    CHECK_EQ(m.invalid, 1);
    CHECK_EQ(m.online_capable, 1);
    CHECK_EQ(m.disabled, 1);
    const uint32_t ids[] = { 0, 2, 255, 0x10000, 0xFFFFFFFEu };
    for (unsigned i = 0; i < 5; i++)
        CHECK_EQ(m.cpus[i].apic_id, ids[i]);
    CHECK(!m.cpus[1].x2apic);         /* its first entry: type 0 */
    CHECK(m.cpus[2].x2apic);
    CHECK_EQ(m.cpus[4].uid, 32);
}

int main(void)
{
    test_gaps_and_flags();
    test_x2apic_and_override();
    test_ioapic_and_overrides();
    test_malformed();
    test_cap();
    test_x2apic_sparse_ids();
    return check_summary("test_madt");
}
