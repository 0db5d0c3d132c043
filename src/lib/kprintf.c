/* kprintf.c — serialised kernel output to the registered sinks (kprintf.h). */
#include "lib/kprintf.h"
#include "arch/percpu.h"
#include "arch/spinlock.h"
#include "lib/format.h"
#include "lib/kassert.h"

#define LINE_MAX_LEN 512
#define NO_OWNER     0xFFFFFFFFu

/* Console ownership, one word so that taking it is one compare-exchange:
 * the owner's CPU index in the low half, the nesting depth in the high
 * half. Only the owner (and a fault nested on it, which finishes before
 * the code it interrupted resumes) changes a held word. */
#define DEPTH_ONE    (1ull << 32)
#define FREE         ((uint64_t)NO_OWNER)
static volatile uint64_t ownership = FREE;

/* Written at boot by the boot CPU only, before the CPUs that print start. */
static struct {
    console_sink_fn write;
    console_present_fn present;
    unsigned flags;
} sinks[CONSOLE_SINKS_MAX];
static unsigned n_sinks;

/* The console's text from the first line on, for sinks added later
 * (CONSOLE_REPLAY); under the console lock. */
static char kept[CONSOLE_KEPT_BYTES];
static unsigned kept_len;
static uint64_t kept_cut;               /* bytes printed once kept[] was full */

static void keep(const char *s, unsigned long n)
{
    unsigned long room = sizeof kept - kept_len, take = n < room ? n : room;
    for (unsigned long i = 0; i < take; i++)
        kept[kept_len + i] = s[i];
    kept_len += (unsigned)take;
    kept_cut += n - take;
}

static void replay(console_sink_fn write)
{
    console_lock();
    write(kept, kept_len);
    if (kept_cut) {
        char line[96];
        int n = ksnprintf(line, sizeof line, "console: %lu bytes printed before this output "
                                             "began were not kept\n",
                          kept_cut);
        write(line, (unsigned long)n);
    }
    console_unlock();
}

bool console_add_sink(console_sink_fn write, console_present_fn present, unsigned flags)
{
    if (n_sinks == CONSOLE_SINKS_MAX)
        return false;
    if (flags & CONSOLE_REPLAY)
        replay(write);
    sinks[n_sinks].write = write;
    sinks[n_sinks].present = present;
    sinks[n_sinks].flags = flags;
    n_sinks++;
    return true;
}

bool console_dump_sink_present(void)
{
    for (unsigned i = 0; i < n_sinks; i++)
        if ((sinks[i].flags & CONSOLE_DUMP_LINES) && (!sinks[i].present || sinks[i].present()))
            return true;
    return false;
}

/* No cli: a CPU waiting here keeps its interrupts as they were, and the
 * holder (a dump streaming for seconds) keeps taking its own. */
void console_lock(void)
{
    uint32_t cpu = this_cpu_index();
    for (;;) {
        uint64_t cur = __atomic_load_n(&ownership, __ATOMIC_ACQUIRE);
        if ((uint32_t)cur == cpu) {     /* a fault while printing: go on */
            __atomic_add_fetch(&ownership, DEPTH_ONE, __ATOMIC_RELAXED);
            return;
        }
        if (cur == FREE && __atomic_compare_exchange_n(&ownership, &cur, cpu | DEPTH_ONE, false,
                                                       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return;
        cpu_relax();
    }
}

bool console_trylock(void)
{
    uint32_t cpu = this_cpu_index();
    uint64_t cur = __atomic_load_n(&ownership, __ATOMIC_ACQUIRE);
    if ((uint32_t)cur == cpu) {
        __atomic_add_fetch(&ownership, DEPTH_ONE, __ATOMIC_RELAXED);
        return true;
    }
    return cur == FREE && __atomic_compare_exchange_n(&ownership, &cur, cpu | DEPTH_ONE, false,
                                                      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void console_unlock(void)
{
    /* Only the holder unlocks: anyone else would free another CPU's lines. */
    kassert((uint32_t)__atomic_load_n(&ownership, __ATOMIC_RELAXED) == this_cpu_index());
    if (__atomic_load_n(&ownership, __ATOMIC_RELAXED) >> 32 > 1)
        __atomic_sub_fetch(&ownership, DEPTH_ONE, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&ownership, FREE, __ATOMIC_RELEASE);
}

/* Drop every nested hold this CPU has (a dump abandoned by a fault). */
void console_unlock_all(void)
{
    uint64_t cur = __atomic_load_n(&ownership, __ATOMIC_ACQUIRE);
    if ((uint32_t)cur == this_cpu_index())
        __atomic_store_n(&ownership, FREE, __ATOMIC_RELEASE);
}

void console_write_locked(const char *s, unsigned long n)
{
    keep(s, n);
    for (unsigned i = 0; i < n_sinks; i++)
        sinks[i].write(s, n);
}

void console_write_dump_locked(const char *s, unsigned long n)
{
    for (unsigned i = 0; i < n_sinks; i++)
        if (sinks[i].flags & CONSOLE_DUMP_LINES)
            sinks[i].write(s, n);
}

int kprintf(const char *fmt, ...)
{
    char line[LINE_MAX_LEN];
    va_list ap;
    va_start(ap, fmt);
    int n = kvsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof line)
        n = sizeof line - 1;
    console_lock();
    console_write_locked(line, (unsigned long)n);
    console_unlock();
    return n;
}

/* A broken invariant (kassert.h): its line on the console, then #UD, so
 * that the exception path parks this CPU after giving back a snapshot or
 * the console it may hold. Here, beside kprintf, because the console lock
 * itself is checked with kassert. */
void kassert_fail(const char *file, unsigned line, const char *expr)
{
    char text[KASSERT_LINE_MAX];
    kassert_format(text, sizeof text, this_cpu_index(), file, line, expr);
    kprintf("\n%s\n", text);
    __asm__ volatile("ud2");
    cpu_park();
}
