/* vectors.h — the interrupt vectors the workloads use.
 *
 * idt.h gives the timer VEC_TIMER and reserves VEC_IPI_FIRST and up for
 * IPIs; the workloads take a block well above the first ones, so other
 * IPI users can grow from VEC_IPI_FIRST without meeting them. */
#ifndef PERF_VECTORS_H
#define PERF_VECTORS_H
#include "arch/idt.h"

#define VEC_WL_WAKE  (VEC_IPI_FIRST + 0x10)   /* wake a CPU to run a posted job */
#define VEC_WL_PING  (VEC_IPI_FIRST + 0x11)   /* ipi workload: the measured IPI */
#define VEC_WL_TIMER (VEC_IPI_FIRST + 0x12)   /* one-shot / fast LAPIC timer */
#define VEC_WL_DONE  (VEC_IPI_FIRST + 0x13)   /* a CPU finished its job: wake the boot CPU */

#endif
