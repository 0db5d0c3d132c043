/* nonce.h — a 64-bit random number made once per boot, the first half of
 * every dump's id (docs/dump-format.md, "Dump identity"): a line of another
 * boot's dump fails this boot's CRCs.
 *
 * RDRAND when CPUID.1:ECX.RDRAND says the CPU has it (retried, as the SDM
 * advises, when the carry flag reports no entropy yet); otherwise, or when
 * it keeps failing, a mix of the TSC (read around a few CPUIDs, whose
 * timing jitters), the APIC ID and the address of the stack. Not for
 * secrets: it only has to differ between boots. */
#ifndef TRACE_NONCE_H
#define TRACE_NONCE_H
#include <stdint.h>

/* The boot's nonce: made on the first call, the same value afterwards. */
uint64_t boot_nonce(void);

#endif
