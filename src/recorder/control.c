/* control.c — tracing on/off, clear, categories (control.h). */
#include "recorder/control.h"
#include "arch/cpu.h"
#include "cpus/smp.h"
#include "lib/kprintf.h"
#include "recorder/snapshot.h"
#include "trace/rings.h"
#include "trace/trace.h"

static void (*clear_also)(void);

/* The switch's own event and the mask change are one step for this CPU:
 * interrupts held for those two, so no tick of ours is traced between
 * "tracing off" and the moment it is off (or before "on" is recorded). */
void control_toggle(void)
{
    uint64_t irq = irq_save();
    bool on = !(trace_get_mask() & TRACE_ENABLE);
    if (!on)
        trace(TRACE_ENABLE, 0, trace_get_mask());
    trace_enable(on);
    if (on)
        trace(TRACE_ENABLE, 1, trace_get_mask());
    irq_restore(irq);
    kprintf("trace: tracing %s\n", on ? "on" : "off");
}

static void clear_rings(void)
{
    for (uint32_t i = 0; i < smp_slots(); i++)
        if (rings_of(i))
            ring_clear(rings_of(i));
    if (clear_also)
        clear_also();
}

void control_clear(void (*also)(void))
{
    clear_also = also;
    snapshot_paused(clear_rings);
    trace(TRACE_CLEAR, 0, 0);
    kprintf("trace: rings and counters cleared\n");
}

void control_set_categories(uint32_t cats)
{
    uint64_t irq = irq_save();          /* as in control_toggle */
    uint32_t now = trace_get_mask();
    trace(TRACE_ENABLE, (now & TRACE_ENABLE) != 0, (now & ~TRACE_CAT_BITS) | cats);
    trace_set_categories(cats);
    irq_restore(irq);
}
