/* workload.c — the workload table, requests, and the boot CPU's run loop. */
#include "perf/workload.h"
#include "console.h"
#include "cpu.h"
#include "format.h"
#include "kstring.h"
#include "percpu.h"
#include "tsc.h"
#include "trace/autodump.h"
#include "trace/trace.h"

extern const struct workload wl_hwlat, wl_ipi, wl_c2c, wl_tsc, wl_timer, wl_stress, wl_bench;

static const struct workload *const table[] = {
    &wl_hwlat, &wl_ipi, &wl_c2c, &wl_tsc, &wl_timer, &wl_stress, &wl_bench,
};
#define COUNT (sizeof table / sizeof table[0])

static const struct workload *volatile pending;   /* requested, not started */
static const struct workload *running;
static uint64_t pending_values[WL_MAX_PARAMS];
static bool     pending_dump;                     /* dump=1: dump at the end */

static const struct workload *by_name(const char *name)
{
    for (unsigned i = 0; i < COUNT; i++)
        if (!strcmp(table[i]->name, name))
            return table[i];
    return NULL;
}

static void warn_console(void *ctx, const char *msg)
{
    (void)ctx;
    kprintf("%s\n", msg);
}

/* Copies spec without its dump=0|1 pair (a parameter of every workload,
 * not of one); *dump says which was given (false when none). */
static void take_dump_flag(const char *spec, char *out, size_t cap, bool *dump)
{
    size_t n = 0;
    *dump = false;
    for (const char *p = spec; *p && n + 1 < cap;) {
        bool at_pair = p > spec && (p[-1] == ':' || p[-1] == ',');
        if (at_pair && (!strncmp(p, "dump=1", 6) || !strncmp(p, "dump=0", 6)) &&
            (p[6] == ',' || !p[6])) {
            *dump = p[5] == '1';
            p += p[6] ? 7 : 6;
            continue;
        }
        out[n++] = *p++;
    }
    while (n && (out[n - 1] == ',' || out[n - 1] == ':'))
        n--;                            /* "name:dump=1" leaves "name:" */
    out[n] = '\0';
}

static bool request(const struct workload *w, const char *spec)
{
    if (running || pending) {
        kprintf("workload: %s is %s; %s not started\n", (running ? running : pending)->name,
                running ? "running" : "about to run", w->name);
        return false;
    }
    char rest[128];
    take_dump_flag(spec, rest, sizeof rest, &pending_dump);
    wlargs_apply(rest, w->params, pending_values, warn_console, NULL);
    pending = w;
    return true;
}

void workload_boot(const char *spec)
{
    oncpu_init();
    if (!spec[0])
        return;
    char name[32];
    const struct workload *w = wlargs_name(spec, name, sizeof name) ? by_name(name) : NULL;
    if (!w) {
        kprintf("workload: unknown workload '%s' (known:", spec);
        for (unsigned i = 0; i < COUNT; i++)
            kprintf(" %s", table[i]->name);
        kprintf("); none started\n");
        return;
    }
    request(w, spec);
}

static const struct workload *by_key(int key)
{
    for (unsigned i = 0; i < COUNT; i++)
        if (table[i]->key == key)
            return table[i];
    return NULL;
}

bool workload_has_key(int key) { return by_key(key) != NULL; }

void workload_key(int key)
{
    const struct workload *w = by_key(key);
    if (w)
        request(w, w->name);
}

void workload_help(void)
{
    char line[160];
    size_t at = 0;
    for (unsigned i = 0; i < COUNT && at < sizeof line; i++)
        at += (size_t)ksnprintf(line + at, sizeof line - at, "%s%c %s", i ? " | " : "",
                                table[i]->key, table[i]->name);
    kprintf("workloads: %s (docs/workloads.md)\n", line);
}

static void print_start(const struct workload *w, const uint64_t *v)
{
    char line[200];
    size_t at = 0;
    line[0] = '\0';
    for (unsigned i = 0; w->params[i].key && at < sizeof line; i++)
        at += (size_t)ksnprintf(line + at, sizeof line - at, " %s=%lu%s", w->params[i].key, v[i],
                                w->params[i].unit);
    kprintf("workload: %s run=%u started on %u CPUs:%s\n", w->name, workload_run_number(),
            cpus_online,
            at ? line : " (no parameters)");
    uint32_t want = TRACE_ENABLE | (1u << TRACE_CAT_WORK);
    if ((trace_get_mask() & want) != want)
        kprintf("workload: tracing is off or trace.mask leaves out WORK: the results are on "
                "the console only\n");
}

static void run(const struct workload *w, const uint64_t *values, bool dump)
{
    running = w;
    uint32_t runs = wlrun_start(w->id);
    oncpu_new_run();
    print_start(w, values);
    uint64_t t0 = rdtsc();
    trace(WORKLOAD_BEGIN, w->id, runs);
    w->run(values);
    trace(WORKLOAD_END, w->id, runs);
    kprintf("workload: %s run=%u done in %lu ms (d dumps the results, scripts/report "
            "renders them)\n", w->name, runs, tsc_to_us(rdtsc() - t0) / 1000);
    running = NULL;
    if (dump)
        autodump_now("workload", "the workload asked for dump=1");
}

void workload_poll(void)
{
    oncpu_poll();
    const struct workload *w = pending;
    if (!w || this_cpu()->index != 0)
        return;
    uint64_t values[WL_MAX_PARAMS];
    memcpy(values, pending_values, sizeof values);
    bool dump = pending_dump;
    pending = NULL;
    irq_enable();
    run(w, values, dump);
    irq_disable();
}
