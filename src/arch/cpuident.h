/* cpuident.h — what the boot CPU is: vendor, brand string,
 * family/model/stepping (CPUID leaves 0, 1, 0x80000002-4) and the
 * microcode revision (MSR 0x8B, IA32_BIOS_SIGN_ID on Intel, the patch
 * level on AMD; read only on those vendors' CPUs that define it, and
 * through rdmsr_safe: a CPU that faults on it leaves it unknown).
 *
 * cpuident_decode() is pure (host-tested): it turns raw CPUID registers
 * into the fields. cpuident_read() runs the instructions. */
#ifndef ARCH_CPUIDENT_H
#define ARCH_CPUIDENT_H
#include <stdbool.h>
#include <stdint.h>
#include "arch/cpu.h"

#define CPUIDENT_BRAND_MAX 49           /* 48 bytes of brand string + NUL */

struct cpu_ident {
    char vendor[13];                /* "GenuineIntel", "AuthenticAMD", ... */
    char brand[CPUIDENT_BRAND_MAX]; /* leading blanks cut; "" when the CPU has none */
    uint32_t family, model, stepping;   /* display values (extended fields folded in) */
    bool microcode_known;
    bool microcode_faulted;         /* MSR 0x8B raised #GP (so not known) */
    uint32_t microcode;
};

/* The registers CPUID gave: leaf 0, leaf 1 and, when max_ext >= 0x80000004,
 * leaves 0x80000002..4 (brand[0..2]). */
struct cpuid_raw {
    struct cpuid_regs leaf0, leaf1;
    uint32_t max_ext;
    struct cpuid_regs brand[3];
};

void cpuident_decode(const struct cpuid_raw *raw, struct cpu_ident *out);
/* Whether this CPU defines MSR 0x8B as the microcode revision. */
bool cpuident_has_ucode_msr(const struct cpu_ident *id);
/* Microcode revision from the MSR's value (Intel: high half; AMD: low). */
uint32_t cpuident_ucode_from_msr(const struct cpu_ident *id, uint64_t msr);
/* Reads this CPU (CPUID, and MSR 0x8B where cpuident_has_ucode_msr). */
void cpuident_read(struct cpu_ident *out);

#endif
