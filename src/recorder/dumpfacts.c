/* dumpfacts.c — the %M items every dump carries (dumpfacts.h). */
#include "recorder/dumpfacts.h"
#include "arch/cpu.h"
#include "arch/extable.h"
#include "arch/percpu.h"
#include "console/serial.h"
#include "lib/kstring.h"
#include "time/uptime.h"
#include "trace/rings.h"
#include "trace/trace.h"

static struct dump_facts facts;

void dump_set_facts(const struct dump_facts *f) { facts = *f; }

void dump_fact_extras(struct dump_extra x[DUMP_FACT_EXTRAS])
{
    /* clang-format off */
    const struct dump_extra facts_now[DUMP_FACT_EXTRAS] = {
        { "fw", facts.fw, 0 },            { "found", NULL, facts.found },
        { "parked", NULL, facts.parked }, { "failed", NULL, facts.failed },
        { "online", NULL, cpus_online },  { "tsc_src", facts.tsc_src, 0 },
        { "tsc_check", facts.tsc_check, 0 }, { "msr_faults", NULL, extable_fixups_taken() },
        { "invariant_tsc", NULL, (uint64_t)facts.invariant_tsc },
        { "tsc_warp", NULL, facts.tsc_warp }, { "timer_hz", NULL, facts.timer_hz },
        { "uptime_tsc", NULL, rdtsc() - uptime_boot_tsc() }, { "capacity", NULL, rings_capacity() },
        { "serial_overruns", NULL, serial_overruns() },
        { "serial_tx_dropped", NULL, serial_tx_dropped() },
        { "no_ring_events", NULL, trace_no_ring_count() },
        { "events_asked", NULL, rings_asked() }, { "ring_bytes", NULL, rings_bytes() },
    };
    /* clang-format on */
    memcpy(x, facts_now, sizeof facts_now);
}
