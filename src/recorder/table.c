/* table.c — print the newest events of every CPU, oldest first. */
#include "recorder/table.h"
#include "lib/kprintf.h"
#include "recorder/snapshot.h"
#include "time/tsc.h"
#include "time/uptime.h"
#include "trace/trace.h"

static void print_args(const struct trace_event_info *info, const struct trace_event *e)
{
    if (info && e->type == TRACE_EV_BOOT_PHASE && trace_phase_name((unsigned)e->a0)) {
        kprintf("phase=%s value=%lu\n", trace_phase_name((unsigned)e->a0), e->a1);
        return;
    }
    const char *n0 = info && info->arg0[0] ? info->arg0 : "a0";
    const char *n1 = info && info->arg1[0] ? info->arg1 : "a1";
    unsigned sig = info ? info->signed_args : 0;
    kprintf(sig & TRACE_ARG0_SIGNED ? "%s=%ld " : "%s=%lu ", n0, e->a0);
    kprintf(sig & TRACE_ARG1_SIGNED ? "%s=%ld\n" : "%s=%lu\n", n1, e->a1);
}

static void print_event(uint32_t cpu, const struct trace_event *e)
{
    const struct trace_event_info *info = trace_event_info(e->type);
    kprintf("%3u %10u %14lu us  %-16s ", cpu, e->seq, tsc_to_us(e->tsc - uptime_boot_tsc()),
            info ? info->name : "?");
    print_args(info, e);
}

static void print_cpu(uint32_t cpu, struct ring *r)
{
    struct trace_event last[TABLE_NEWEST], ev;
    uint64_t seq, n = 0;
    struct ring_snap s;
    ring_snap_begin(&s, r);
    while (ring_snap_next(&s, &ev, &seq))
        last[n++ % TABLE_NEWEST] = ev;
    uint64_t shown = n < TABLE_NEWEST ? n : TABLE_NEWEST;
    for (uint64_t i = n - shown; i < n; i++)
        print_event(cpu, &last[i % TABLE_NEWEST]);
}

/* The newest TABLE_MERGED events of all CPUs together, oldest first (by
 * TSC): held in order, each newer event pushing out the oldest. */
static struct {
    struct trace_event ev;
    uint32_t cpu;
} merged[TABLE_MERGED];
static unsigned nmerged;

static void keep_newest(uint32_t cpu, const struct trace_event *ev)
{
    if (nmerged == TABLE_MERGED && ev->tsc <= merged[0].ev.tsc)
        return;
    unsigned at = nmerged == TABLE_MERGED ? 0 : nmerged++;
    /* Drop merged[0] (full) or take a new slot, then sink into place. */
    if (at == 0 && nmerged == TABLE_MERGED)
        for (; at + 1 < TABLE_MERGED && merged[at + 1].ev.tsc < ev->tsc; at++)
            merged[at] = merged[at + 1];
    else
        for (; at > 0 && merged[at - 1].ev.tsc > ev->tsc; at--)
            merged[at] = merged[at - 1];
    merged[at].ev = *ev;
    merged[at].cpu = cpu;
}

static void print_merged(const struct snapshot *f, uint32_t shown)
{
    nmerged = 0;
    for (uint32_t i = 0; i < f->n; i++) {
        struct ring_snap s;
        struct trace_event ev;
        uint64_t seq;
        if (!f->rings[i])
            continue;
        ring_snap_begin(&s, f->rings[i]);
        while (ring_snap_next(&s, &ev, &seq))
            keep_newest(i, &ev);
    }
    kprintf("newest: the %u newest events of all %u CPUs (S prints each CPU's newest)\n",
            nmerged, shown);
    kprintf("cpu        seq      since boot     event            args\n");
    for (unsigned i = 0; i < nmerged; i++)
        print_event(merged[i].cpu, &merged[i].ev);
}

void table_print_newest(bool full)
{
    struct snapshot f;
    if (!snapshot_take(&f))
        return;
    uint32_t shown = 0;
    for (uint32_t i = 0; i < f.n; i++)
        shown += f.rings[i] != NULL;
    if (!full && shown > TABLE_CPUS_MAX) {
        print_merged(&f, shown);
        snapshot_release(&f);
        return;
    }
    kprintf("cpu        seq      since boot     event            args\n");
    for (uint32_t i = 0; i < f.n; i++)
        if (f.rings[i])
            print_cpu(i, f.rings[i]);
    snapshot_release(&f);
}
