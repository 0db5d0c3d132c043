/* test_cpuident.c — CPUID identity decoding (arch/cpuident.h), with the
 * register values of real CPUs (SDM vol. 2A; AMD APM vol. 3). */
#include <string.h>
#include "arch/cpuident.h"
#include "check.h"

static struct cpuid_regs str_regs(const char *s16)
{
    struct cpuid_regs r;
    memcpy(&r.eax, s16, 4);
    memcpy(&r.ebx, s16 + 4, 4);
    memcpy(&r.ecx, s16 + 8, 4);
    memcpy(&r.edx, s16 + 12, 4);
    return r;
}

static void vendor(struct cpuid_raw *raw, const char *v12)
{
    memcpy(&raw->leaf0.ebx, v12, 4);
    memcpy(&raw->leaf0.edx, v12 + 4, 4);
    memcpy(&raw->leaf0.ecx, v12 + 8, 4);
    raw->leaf0.eax = 0x16;
}

static void setup(struct cpuid_raw *raw, const char *v12, uint32_t leaf1_eax, uint32_t max_ext)
{
    memset(raw, 0, sizeof *raw);
    vendor(raw, v12);
    raw->leaf1.eax = leaf1_eax;
    raw->max_ext = max_ext;
}

static void test_intel_skylake_sp(void)
{
    struct cpuid_raw raw;
    struct cpu_ident id;
    setup(&raw, "GenuineIntel", 0x00050654, 0x80000008);   /* family 6, model 0x55, stepping 4 */
    raw.brand[0] = str_regs("        Intel(R)");
    raw.brand[1] = str_regs(" Xeon(R) Gold 61");
    raw.brand[2] = str_regs("30 CPU @ 2.10GHz");
    cpuident_decode(&raw, &id);
    CHECK(!strcmp(id.vendor, "GenuineIntel"));
    CHECK(!strcmp(id.brand, "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz"));
    CHECK_EQ(id.family, 6);
    CHECK_EQ(id.model, 0x55);
    CHECK_EQ(id.stepping, 4);
    CHECK(cpuident_has_ucode_msr(&id));
    CHECK_EQ(cpuident_ucode_from_msr(&id, 0x0200005E00000000ull), 0x0200005E);
}

static void test_amd_zen2(void)
{
    struct cpuid_raw raw;
    struct cpu_ident id;
    setup(&raw, "AuthenticAMD", 0x00830F10, 0x80000020);   /* family 0x17, model 0x31, stepping 0 */
    raw.brand[0] = str_regs("AMD EPYC 7742 64");
    raw.brand[1] = str_regs("-Core Processor ");
    raw.brand[2] = str_regs("               ");   /* 15 blanks and a NUL */
    cpuident_decode(&raw, &id);
    CHECK_EQ(id.family, 0x17);
    CHECK_EQ(id.model, 0x31);
    CHECK_EQ(id.stepping, 0);
    CHECK(!strcmp(id.brand, "AMD EPYC 7742 64-Core Processor"));
    CHECK(cpuident_has_ucode_msr(&id));
    CHECK_EQ(cpuident_ucode_from_msr(&id, 0x0000000008301034ull), 0x08301034);
}

static void test_old_and_other(void)
{
    struct cpuid_raw raw;
    struct cpu_ident id;
    setup(&raw, "AuthenticAMD", 0x00060FB1, 0x80000001);   /* K8 (family 0xF), no brand string */
    raw.brand[0] = str_regs("garbage not read");
    cpuident_decode(&raw, &id);
    CHECK_EQ(id.family, 0xF);
    CHECK_EQ(id.model, 0x6B);                 /* family 15: the extended model counts */
    CHECK(!strcmp(id.brand, ""));
    CHECK(!cpuident_has_ucode_msr(&id));
    vendor(&raw, "CentaurHauls");
    raw.leaf1.eax = 0x000006F2;
    cpuident_decode(&raw, &id);
    CHECK(!cpuident_has_ucode_msr(&id));
    vendor(&raw, "GenuineIntel");
    raw.leaf1.eax = 0x00000543;               /* Pentium (family 5): no MSR 0x8B */
    cpuident_decode(&raw, &id);
    CHECK_EQ(id.family, 5);
    CHECK_EQ(id.model, 4);                    /* family 5: extended model ignored */
    CHECK(!cpuident_has_ucode_msr(&id));
}

int main(void)
{
    test_intel_skylake_sp();
    test_amd_zen2();
    test_old_and_other();
    return check_summary("test_cpuident");
}
