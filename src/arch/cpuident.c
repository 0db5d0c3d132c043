/* cpuident.c — CPUID identity (Intel SDM vol. 2A CPUID; AMD APM vol. 3 E.3). */
#include "arch/cpuident.h"
#include "arch/msr.h"

#define LEAF_EXT_MAX        0x80000000u
#define LEAF_BRAND_FIRST    0x80000002u
#define LEAF_BRAND_LAST     0x80000004u
#define MSR_UCODE_REV       0x8Bu       /* IA32_BIOS_SIGN_ID / AMD PATCH_LEVEL */
#define FAMILY_EXTENDED     0xFu        /* family 15: add the extended family */
#define FAMILY_INTEL_P6     0x6u        /* family 6 (and 15): extended model counts */
#define AMD_FIRST_UCODE_MSR 0x10u       /* AMD family 10h on: MSR 0x8B is the patch level */

/* arch/ uses nothing above it: its own two string helpers. */
static bool same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

static void zero(void *p, unsigned n)
{
    for (unsigned char *b = p; n--;)
        *b++ = 0;
}

static void put_regs(char *dst, const struct cpuid_regs *r, bool ebx_edx_ecx)
{
    uint32_t w[4] = { r->eax, r->ebx, r->ecx, r->edx };
    if (ebx_edx_ecx) {                  /* leaf 0's vendor string order */
        w[0] = r->ebx;
        w[1] = r->edx;
        w[2] = r->ecx;
    }
    for (unsigned i = 0; i < (ebx_edx_ecx ? 3u : 4u); i++)
        for (unsigned b = 0; b < 4; b++)
            dst[i * 4 + b] = (char)(w[i] >> (8 * b));
}

static void decode_brand(const struct cpuid_raw *raw, char *out)
{
    char s[CPUIDENT_BRAND_MAX];
    zero(s, sizeof s);
    if (raw->max_ext >= LEAF_BRAND_LAST)
        for (unsigned i = 0; i < 3; i++)
            put_regs(s + 16 * i, &raw->brand[i], false);
    unsigned from = 0, k = 0;
    while (s[from] == ' ')
        from++;
    for (unsigned i = from; i < sizeof s - 1 && s[i]; i++)
        out[k++] = s[i] >= 0x20 && s[i] < 0x7F ? s[i] : '?';
    while (k && out[k - 1] == ' ')
        k--;
    out[k] = 0;
}

void cpuident_decode(const struct cpuid_raw *raw, struct cpu_ident *out)
{
    zero(out, sizeof *out);
    put_regs(out->vendor, &raw->leaf0, true);
    uint32_t a = raw->leaf1.eax;
    uint32_t family = (a >> 8) & 0xF, model = (a >> 4) & 0xF;
    out->stepping = a & 0xF;
    out->family = family == FAMILY_EXTENDED ? family + ((a >> 20) & 0xFF) : family;
    out->model = family == FAMILY_EXTENDED || family == FAMILY_INTEL_P6
                     ? model | ((a >> 16) & 0xF) << 4
                     : model;
    decode_brand(raw, out->brand);
}

bool cpuident_has_ucode_msr(const struct cpu_ident *id)
{
    if (same(id->vendor, "GenuineIntel"))
        return id->family >= FAMILY_INTEL_P6;
    if (same(id->vendor, "AuthenticAMD") || same(id->vendor, "HygonGenuine"))
        return id->family >= AMD_FIRST_UCODE_MSR;
    return false;
}

uint32_t cpuident_ucode_from_msr(const struct cpu_ident *id, uint64_t msr)
{
    return same(id->vendor, "GenuineIntel") ? (uint32_t)(msr >> 32) : (uint32_t)msr;
}

#ifndef HOST_BUILD
void cpuident_read(struct cpu_ident *out)
{
    struct cpuid_raw raw;
    zero(&raw, sizeof raw);
    raw.leaf0 = cpuid(0, 0);
    if (raw.leaf0.eax >= 1)
        raw.leaf1 = cpuid(1, 0);
    raw.max_ext = cpuid(LEAF_EXT_MAX, 0).eax;
    if (raw.max_ext >= LEAF_BRAND_LAST)
        for (uint32_t i = 0; i < 3; i++)
            raw.brand[i] = cpuid(LEAF_BRAND_FIRST + i, 0);
    cpuident_decode(&raw, out);
    if (!cpuident_has_ucode_msr(out))
        return;
    /* Emulators and hypervisors may not implement it (Bochs: #GP). */
    uint64_t msr;
    bool intel = same(out->vendor, "GenuineIntel");
    if (intel && !wrmsr_safe(MSR_UCODE_REV, 0)) {   /* SDM: write 0, CPUID(1), read */
        out->microcode_faulted = true;
        return;
    }
    if (intel)
        (void)cpuid(1, 0);
    if (!rdmsr_safe(MSR_UCODE_REV, &msr)) {
        out->microcode_faulted = true;
        return;
    }
    out->microcode = cpuident_ucode_from_msr(out, msr);
    out->microcode_known = true;
}
#endif
