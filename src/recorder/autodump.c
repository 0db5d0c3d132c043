/* autodump.c — trace.dump_after and dumps at a workload's end. */
#include "recorder/autodump.h"
#include "arch/cpu.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "recorder/dump.h"
#include "time/tsc.h"
#include "time/uptime.h"

static uint32_t after_s;
static uint64_t due_tsc;              /* 0: nothing pending */

void autodump_init(uint32_t seconds)
{
    after_s = seconds;
    due_tsc = seconds ? uptime_boot_tsc() + tsc_from_us(seconds * 1000000ull) : 0;
}

void autodump_now(const char *trigger, const char *why)
{
    kprintf("trace: %s; dumping every ring\n", why);
    const struct dump_request rq = { trigger, -1, 0, false };
    dump_run(&rq);
}

void autodump_poll(void)
{
    if (!due_tsc || rdtsc() < due_tsc)
        return;
    due_tsc = 0;
    char why[48];
    ksnprintf(why, sizeof why, "trace.dump_after=%u reached", after_s);
    autodump_now("timer", why);
}
