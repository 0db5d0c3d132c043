/* smi.c — see smi.h. */
#include "perf/smi.h"
#include "arch/cpu.h"
#include "arch/msr.h"

#define VENDOR_INTEL_EBX 0x756E6547u  /* "Genu" */
#define CPUID_HYPERVISOR (1u << 31)   /* leaf 1 ECX */
#define LEAF_HYPERVISOR  0x40000000u
#define KVM_SIG_EBX      0x4B4D564Bu  /* "KVMK" of "KVMKVMKVM" */
#define NEHALEM_FIRST    0x1A

/* Family 6 models at or after Nehalem's number that predate the counter:
 * Core 2 Xeon 7400 and the Bonnell/Saltwell Atoms. */
static const uint8_t old_models[] = { 0x1C, 0x1D, 0x26, 0x27, 0x35, 0x36 };

bool smi_available(const char **why)
{
    struct cpuid_regs v = cpuid(0, 0), f = cpuid(1, 0);
    uint32_t family = (f.eax >> 8) & 0xF;
    uint32_t model = ((f.eax >> 4) & 0xF) | ((f.eax >> 12) & 0xF0);
    if (v.ebx != VENDOR_INTEL_EBX) {
        *why = "not an Intel CPU";
        return false;
    }
    if (family != 6 || model < NEHALEM_FIRST) {
        *why = "Intel CPU older than Nehalem or not family 6";
        return false;
    }
    for (unsigned i = 0; i < sizeof old_models; i++)
        if (model == old_models[i]) {
            *why = "Intel model without the counter";
            return false;
        }
    if ((f.ecx & CPUID_HYPERVISOR) && cpuid(LEAF_HYPERVISOR, 0).ebx != KVM_SIG_EBX) {
        *why = "hypervisor that may not emulate MSR 0x34";
        return false;
    }
    uint64_t count;
    if (!rdmsr_safe(MSR_SMI_COUNT, &count)) {
        *why = "MSR 0x34 raised #GP (not implemented here)";
        return false;
    }
    *why = "MSR 0x34";
    return true;
}

uint64_t smi_read(void)
{
    uint64_t v;
    return rdmsr_safe(MSR_SMI_COUNT, &v) ? v & 0xFFFFFFFFu : SMI_UNKNOWN;  /* 31:0: the count */
}
