/* acpi.c — RSDP/RSDT/XSDT walk with checksums (ACPI 6.5 §5.2). */
#include "firmware/acpi.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"

#define RSDP_V1_LEN       20
#define RSDP_V2_LEN       36
#define BDA_EBDA_SEGMENT  0x40E
#define BIOS_AREA_START   0xE0000
#define BIOS_AREA_END     0x100000
#define FADT_PM_TMR_BLK   76
#define FADT_FLAGS        112
#define FADT_X_PM_TMR_BLK 208
#define FADT_TMR_VAL_EXT  (1u << 8)
#define GAS_SPACE_IO      1
#define HPET_BASE_GAS     40

static const struct acpi_sdt *root;
static bool root_is_xsdt;

static uint8_t sum(const void *p, uint32_t n)
{
    const uint8_t *b = p;
    uint8_t s = 0;
    while (n--) s += *b++;
    return s;
}

static bool rsdp_valid(const uint8_t *p, unsigned avail)
{
    if (avail < RSDP_V1_LEN || memcmp(p, "RSD PTR ", 8) || sum(p, RSDP_V1_LEN))
        return false;
    if (p[15] >= 2 && avail >= RSDP_V2_LEN) {
        uint32_t len;
        memcpy(&len, p + 20, 4);
        return len >= RSDP_V2_LEN && len <= avail ? sum(p, len) == 0 : true;
    }
    return true;
}

static const uint8_t *scan(uint64_t from, uint64_t to)
{
    for (uint64_t a = from; a + RSDP_V2_LEN <= to; a += 16)
        if (rsdp_valid((const uint8_t *)(uintptr_t)a, RSDP_V2_LEN))
            return (const uint8_t *)(uintptr_t)a;
    return NULL;
}

static const uint8_t *find_rsdp(const struct mb2_info *mb)
{
    if (mb->rsdp_len && rsdp_valid(mb->rsdp, mb->rsdp_len))
        return mb->rsdp;
    if (mb->efi)
        return NULL;                    /* no legacy BIOS areas to scan */
    uint64_t ebda = (uint64_t)*(volatile uint16_t *)BDA_EBDA_SEGMENT << 4;
    const uint8_t *p = ebda ? scan(ebda, ebda + 1024) : NULL;
    return p ? p : scan(BIOS_AREA_START, BIOS_AREA_END);
}

static bool table_ok(const struct acpi_sdt *t)
{
    return t && t->length >= sizeof *t && sum(t, t->length) == 0;
}

bool acpi_init(const struct mb2_info *mb)
{
    const uint8_t *rsdp = find_rsdp(mb);
    if (!rsdp) {
        kprintf("acpi: no valid RSDP (boot tags and BIOS areas searched)\n");
        return false;
    }
    uint32_t rsdt;
    uint64_t xsdt = 0;
    memcpy(&rsdt, rsdp + 16, 4);
    if (rsdp[15] >= 2)
        memcpy(&xsdt, rsdp + 24, 8);
    const struct acpi_sdt *x = (const struct acpi_sdt *)(uintptr_t)xsdt;
    if (xsdt && xsdt < 0x100000000ull && table_ok(x) && !memcmp(x->signature, "XSDT", 4)) {
        root = x;
        root_is_xsdt = true;
        return true;
    }
    const struct acpi_sdt *r = (const struct acpi_sdt *)(uintptr_t)rsdt;
    if (table_ok(r) && !memcmp(r->signature, "RSDT", 4)) {
        root = r;
        return true;
    }
    kprintf("acpi: RSDT/XSDT missing or checksum bad\n");
    return false;
}

const struct acpi_sdt *acpi_find(const char sig[4])
{
    if (!root)
        return NULL;
    unsigned width = root_is_xsdt ? 8 : 4;
    unsigned n = (root->length - sizeof *root) / width;
    const uint8_t *entries = (const uint8_t *)(root + 1);
    for (unsigned i = 0; i < n; i++) {
        uint64_t addr = 0;
        memcpy(&addr, entries + i * width, width);
        if (!addr || addr >= 0x100000000ull)
            continue;                   /* outside the identity map */
        const struct acpi_sdt *t = (const struct acpi_sdt *)(uintptr_t)addr;
        if (!memcmp(t->signature, sig, 4) && table_ok(t))
            return t;
    }
    return NULL;
}

static const uint8_t *fadt(void)
{
    return (const uint8_t *)acpi_find("FACP");
}

uint16_t acpi_pm_timer_port(void)
{
    const uint8_t *f = fadt();
    if (!f)
        return 0;
    uint32_t len = ((const struct acpi_sdt *)f)->length;
    if (len >= FADT_X_PM_TMR_BLK + 12 && f[FADT_X_PM_TMR_BLK] == GAS_SPACE_IO) {
        uint64_t addr;
        memcpy(&addr, f + FADT_X_PM_TMR_BLK + 4, 8);
        if (addr && addr < 0x10000)
            return (uint16_t)addr;
    }
    uint32_t port = 0;
    if (len >= FADT_PM_TMR_BLK + 4)
        memcpy(&port, f + FADT_PM_TMR_BLK, 4);
    return port < 0x10000 ? (uint16_t)port : 0;
}

bool acpi_pm_timer_32bit(void)
{
    const uint8_t *f = fadt();
    uint32_t flags = 0;
    if (f && ((const struct acpi_sdt *)f)->length >= FADT_FLAGS + 4)
        memcpy(&flags, f + FADT_FLAGS, 4);
    return flags & FADT_TMR_VAL_EXT;
}

uint64_t acpi_hpet_base(void)
{
    const uint8_t *h = (const uint8_t *)acpi_find("HPET");
    uint64_t base = 0;
    if (h && ((const struct acpi_sdt *)h)->length >= HPET_BASE_GAS + 12 && h[HPET_BASE_GAS] == 0)
        memcpy(&base, h + HPET_BASE_GAS + 4, 8);
    return base < 0x100000000ull ? base : 0;
}
