/* smp.h — starting the application processors (see smp.c for the policy). */
#ifndef CPUS_SMP_H
#define CPUS_SMP_H
#include <stdbool.h>
#include <stdint.h>
#include "firmware/madt.h"

struct smp_summary {
    uint32_t found;        /* ENABLED CPUs in the MADT */
    uint32_t online;       /* CPUs running, BSP included */
    uint32_t parked;       /* enabled but not started: MAX_CPUS, maxcpus, nosmp */
    uint32_t failed;       /* sent INIT/SIPI but never arrived; parked again */
    uint32_t slots;        /* CPU indices assigned (online or failed) */
    uint64_t bringup_us;   /* first INIT to the last AP's arrival (or the timeout) */
};

/* What an AP runs once it is online (main.c's); never returns. */
typedef void (*ap_online_fn)(uint32_t index) __attribute__((noreturn));

/* Start the APs listed in `madt`, at most `limit` CPUs in all; each runs
 * `online` once its per-CPU state is installed. Returns when every
 * started AP is online or the bring-up timeout has passed. */
void smp_start(const struct madt_info *madt, uint32_t limit, struct smp_summary *out,
               ap_online_fn online);
/* Let the APs go on past bring-up (TSC warp check, timer, idle). */
void smp_release(void);
/* CPU index for an APIC ID, or -1. */
int smp_index_of(uint32_t apic_id);
uint32_t smp_slots(void);

/* Halt the calling AP until smp_release()'s broadcast IPI (used by
 * ap_main; interrupts off, and off again on return). */
void smp_wait_release(void);

#endif
