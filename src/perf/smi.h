/* smi.h — Intel's SMI counter, MSR_SMI_COUNT (0x34): how many System
 * Management Interrupts this CPU has taken since reset. An SMI stops the
 * CPU invisibly to any OS: the hwlat workload uses the counter to tell
 * gaps caused by SMIs from others.
 *
 * The counter is read only where it is known to exist: Intel family 6
 * from Nehalem on (not the Core 2 / first Atom models), and under a
 * hypervisor only one known to emulate it (KVM); and always through
 * rdmsr_safe (arch/msr.h), since an emulator may still lack it (Bochs
 * raises #GP): then it is not available, and says so. */
#ifndef PERF_SMI_H
#define PERF_SMI_H
#include <stdbool.h>
#include <stdint.h>

#define MSR_SMI_COUNT 0x34
#define SMI_UNKNOWN   UINT64_MAX       /* an SMI count we could not read */

/* Whether this CPU has the counter; *why says why not (or "MSR 0x34"). */
bool smi_available(const char **why);
uint64_t smi_read(void);               /* SMI_UNKNOWN when the read faulted */

#endif
