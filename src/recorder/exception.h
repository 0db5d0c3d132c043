/* exception.h — CPU exceptions and NMIs.
 *
 * A fault prints the CPU, the vector's name, error code, RIP, CR2 and all
 * registers on the console and records an EXCEPTION trace event, the
 * last event of that CPU. Then, by trace.on_fault:
 *   dump    the faulting CPU itself, interrupts off, writes a dump of
 *           every ring (trigger=fault fault_cpu=N fault_vector=V), on a
 *           stack of its own; the other CPUs keep running (default)
 *   freeze  tracing stops everywhere, so the rings keep the evidence for
 *           a later `d`, or for `l` after a warm reset
 *   off     nothing more
 * and the CPU parks. A fault on a CPU in the middle of a dump cuts that
 * dump short (no DUMP END) and frees what it held, so nothing deadlocks;
 * a fault while another CPU dumps waits for that dump, bounded.
 *
 * An NMI (front-panel button, BMC, QEMU inject-nmi; LINT1 is programmed
 * for NMI on every CPU) records EXCEPTION vector=2 with the interrupted
 * RIP on every CPU that takes it (the dump carries where each CPU was);
 * the first CPU to take it prints `NMI cpu=N rip=...`, waits (at most NMI_GATHER_MS) until the other
 * CPUs have taken it too, then writes one dump (trigger=nmi, same
 * on_fault policy); the others return at once.
 * NMIs within NMI_BURST_MS of the end of that dump are the same NMI seen
 * late, not a new request: no dump, and one console line per window says
 * that it was folded (printed only if the console is free: an NMI never
 * waits for it). */
#ifndef RECORDER_EXCEPTION_H
#define RECORDER_EXCEPTION_H
#include <stdint.h>
#include "arch/idt.h"

#define NMI_BURST_MS  2000
#define NMI_GATHER_MS 500      /* the dumper waits this long for the others */

enum on_fault { ON_FAULT_DUMP,
                ON_FAULT_FREEZE,
                ON_FAULT_OFF };

void exception_set_on_fault(enum on_fault action);
/* The CPU whose idle loop reads the keys: the boot CPU, or after it
 * faulted the lowest-numbered CPU still running, so that d, l, s ... go on
 * working (workloads need the boot CPU and do not). */
uint32_t exception_keys_cpu(void);
void exception_handle(struct int_frame *f);

#endif
