/* workload.c — the workload table (from recorder/workloads.def), requests, and
 * the boot CPU's run loop. */
#include "perf/workload.h"
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "perf/matrix.h"
#include "perf/wlrun.h"
#include "recorder/autodump.h"
#include "time/tsc.h"
#include "trace/trace.h"

/* The implementations, in workloads.def order: impl[i] belongs to
 * workload_decl[i] (recorder/schema.h), its identity. */
#define WORKLOAD(id, ENUM, name, key, results, desc) extern const struct workload wl_##name;
#include "recorder/workloads.def"
static const struct workload *const impl[] = {
#define WORKLOAD(id, ENUM, name, key, results, desc) &wl_##name,
#include "recorder/workloads.def"
};
#define COUNT (sizeof impl / sizeof impl[0])
#define NONE  (-1)

static volatile int pending = NONE;               /* requested, not started */
static int running = NONE;
static uint64_t pending_values[WL_MAX_PARAMS];
static struct wl_cpus pending_cpus;               /* its cpus= list, if it has one */
static bool pending_dump;                     /* dump=1: dump at the end */

static int by_name(const char *name)
{
    for (unsigned i = 0; i < COUNT; i++)
        if (!strcmp(workload_decl[i].name, name))
            return (int)i;
    return NONE;
}

/* An implementation that still states its identity must state the .def's. */
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

static bool request(int w, const char *spec)
{
    int busy = running != NONE ? running : pending;
    if (busy != NONE) {
        kprintf("workload: %s is %s; %s not started\n", workload_decl[busy].name,
                running != NONE ? "running" : "about to run", workload_decl[w].name);
        return false;
    }
    char rest[128];
    take_dump_flag(spec, rest, sizeof rest, &pending_dump);
    wlargs_apply(rest, impl[w]->params, pending_values, &pending_cpus, warn_console, NULL);
    pending = w;
    return true;
}

void workload_boot(const char *spec)
{
    oncpu_init();
    if (!spec[0])
        return;
    char name[32];
    int w = wlargs_name(spec, name, sizeof name) ? by_name(name) : NONE;
    if (w == NONE) {
        kprintf("workload: unknown workload '%s' (known:", spec);
        for (unsigned i = 0; i < COUNT; i++)
            kprintf(" %s", workload_decl[i].name);
        kprintf("); none started\n");
        return;
    }
    request(w, spec);
}

static int by_key(int key)
{
    for (unsigned i = 0; i < COUNT; i++)
        if (workload_decl[i].key == key)
            return (int)i;
    return NONE;
}

bool workload_has_key(int key) { return by_key(key) != NONE; }

void workload_key(int key)
{
    int w = by_key(key);
    if (w != NONE)
        request(w, workload_decl[w].name);
}

void workload_help(void)
{
    char line[160];
    size_t at = 0;
    for (unsigned i = 0; i < COUNT && at < sizeof line; i++)
        at += (size_t)ksnprintf(line + at, sizeof line - at, "%s%c %s", i ? " | " : "",
                                workload_decl[i].key, workload_decl[i].name);
    kprintf("workloads: %s (docs/workloads.md)\n", line);
}

static void print_start(int wi, const uint64_t *v)
{
    const struct workload *w = impl[wi];
    char line[200];
    size_t at = 0;
    uint32_t on = cpus_online;          /* a pair workload: the CPUs it measures */
    line[0] = '\0';
    for (unsigned i = 0; w->params[i].key && at < sizeof line; i++)
        if (w->params[i].cpu_list)      /* the workload names its CPUs itself */
            on = matrix_count(workload_cpus(), v[i]);
        else
            at += (size_t)ksnprintf(line + at, sizeof line - at, " %s=%lu%s", w->params[i].key, v[i],
                                    w->params[i].unit);
    kprintf("workload: %s run=%u started on %u CPU%s:%s\n", workload_decl[wi].name,
            workload_run_number(), on, on == 1 ? "" : "s", at ? line : " (no parameters)");
    uint32_t want = TRACE_ENABLE | (1u << TRACE_CAT_WORK);
    if ((trace_get_mask() & want) != want)
        kprintf("workload: tracing is off or trace.mask leaves out WORK: the results are on "
                "the console only\n");
}

static void run(int w, const uint64_t *values, bool dump)
{
    running = w;
    uint8_t id = workload_decl[w].id;
    uint32_t runs = wlrun_start(id);
    oncpu_new_run();
    print_start(w, values);
    uint64_t t0 = rdtsc();
    trace(WORKLOAD_BEGIN, id, runs);
    impl[w]->run(values);
    trace(WORKLOAD_END, id, runs);
    kprintf("workload: %s run=%u done in %lu ms (d dumps the results, scripts/report "
            "renders them)\n",
            workload_decl[w].name, runs, tsc_to_us(rdtsc() - t0) / 1000);
    running = NONE;
    if (dump)
        autodump_now("workload", "the workload asked for dump=1");
}

void workload_poll(void)
{
    oncpu_poll();
    int w = pending;
    if (w == NONE || this_cpu()->index != 0)
        return;
    uint64_t values[WL_MAX_PARAMS];
    memcpy(values, pending_values, sizeof values);
    wlrun_set_cpus(&pending_cpus);
    bool dump = pending_dump;
    pending = NONE;
    irq_enable();
    run(w, values, dump);
    irq_disable();
}
