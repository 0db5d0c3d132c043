/* madt.c — MADT parsing (ACPI 6.5 §5.2.12). */
#include "firmware/madt.h"
#include "lib/bytes.h"
#include "lib/kstring.h"

#define SDT_HEADER_LEN       36
#define MADT_ENTRIES_OFF     44
#define MADT_FLAG_PCAT       1u

#define TYPE_LAPIC           0
#define TYPE_IOAPIC          1
#define TYPE_OVERRIDE        2
#define TYPE_LAPIC_OVERRIDE  5
#define TYPE_X2APIC          9

#define LAPIC_ENABLED        1u
#define LAPIC_ONLINE_CAPABLE 2u

static void add_cpu(struct madt_info *out, uint32_t apic_id, uint32_t uid, uint32_t flags, bool x2)
{
    if (!(flags & LAPIC_ENABLED)) {
        if (flags & LAPIC_ONLINE_CAPABLE)
            out->online_capable++;
        else
            out->disabled++;
        return;
    }
    if (apic_id == MADT_NO_CPU) {
        out->invalid++;
        return;
    }
    for (unsigned i = 0; i < out->stored; i++)
        if (out->cpus[i].apic_id == apic_id) {
            out->repeated++;
            return;
        }
    out->enabled++;
    if (out->stored < MADT_MAX_CPUS)
        out->cpus[out->stored++] = (struct madt_cpu){ apic_id, uid, x2 };
}

bool madt_parse(const uint8_t *t, size_t len, struct madt_info *out, const char **why)
{
    memset(out, 0, sizeof *out);
    if (len < MADT_ENTRIES_OFF || memcmp(t, "APIC", 4) || le32(t + 4) != len) {
        *why = "MADT header is malformed";
        return false;
    }
    out->lapic_addr = le32(t + SDT_HEADER_LEN);
    out->pcat_compat = le32(t + SDT_HEADER_LEN + 4) & MADT_FLAG_PCAT;
    for (size_t off = MADT_ENTRIES_OFF; off < len;) {
        if (off + 2 > len || t[off + 1] < 2 || off + t[off + 1] > len) {
            *why = "an MADT entry overruns the table";
            return false;
        }
        const uint8_t *e = t + off;
        uint8_t type = e[0], elen = e[1];
        if (type == TYPE_LAPIC && elen >= 8)
            add_cpu(out, e[3], e[2], le32(e + 4), false);
        else if (type == TYPE_X2APIC && elen >= 16)
            add_cpu(out, le32(e + 4), le32(e + 12), le32(e + 8), true);
        else if (type == TYPE_LAPIC_OVERRIDE && elen >= 12)
            out->lapic_addr = le64(e + 4);
        else if (type == TYPE_IOAPIC && elen >= 12 && out->ioapics < MADT_MAX_IOAPICS)
            out->ioapic[out->ioapics++] = (struct madt_ioapic){ e[2], le32(e + 4), le32(e + 8) };
        else if (type == TYPE_OVERRIDE && elen >= 10 && e[2] == 0 &&
                 out->overrides < MADT_MAX_OVERRIDES)
            out->override[out->overrides++] =
                (struct madt_override){ e[3], le32(e + 4), le16(e + 8) };
        off += elen;
    }
    return true;
}
