/* status.c — the status rows' text and the dump progress they show. */
#include "status.h"
#include <stdbool.h>
#include "format.h"
#include "kstring.h"
#include "percpu.h"
#include "screen.h"
#include "tsc.h"
#include "cpu.h"
#include "uptime.h"
#include "trace/trace.h"

#define ROW_MAX 256

enum dump_state { DUMP_NONE, DUMP_SENDING, DUMP_DONE };

/* Progress of the current (or last) dump, parsed from its own lines. */
static struct {
    enum dump_state state;
    uint64_t no, events_total, events_sent, lines;
} dump;

/* The value of " key=" (or "key=" at the start) in s[0..n), or 0. */
static uint64_t field(const char *s, unsigned long n, const char *key)
{
    unsigned long k = strlen(key);
    for (unsigned long i = 0; i + k + 1 < n; i++) {
        if ((i && s[i - 1] != ' ') || strncmp(s + i, key, k) || s[i + k] != '=')
            continue;
        uint64_t v = 0;
        for (i += k + 1; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            v = v * 10 + (uint64_t)(s[i] - '0');
        return v;
    }
    return 0;
}

static bool starts(const char *s, unsigned long n, const char *word)
{
    unsigned long k = strlen(word);
    return n >= k && !strncmp(s, word, k);
}

void status_dump_line(const char *s, unsigned long n)
{
    if (starts(s, n, "DUMP BEGIN")) {
        dump.state = DUMP_SENDING;
        dump.no = field(s, n, "dump");
        dump.events_total = field(s, n, "events");
        dump.events_sent = dump.lines = 0;
    } else if (starts(s, n, "%C")) {
        dump.events_sent += field(s, n, "sent");   /* one CPU's events are out */
    } else if (starts(s, n, "DUMP END")) {
        dump.state = DUMP_DONE;
        dump.events_sent = field(s, n, "events");
    }
    dump.lines++;
    screen_refresh();
}

static void (*count_events)(uint64_t *recorded, uint64_t *overwritten);

void status_set_counter(void (*counts)(uint64_t *recorded, uint64_t *overwritten))
{
    count_events = counts;
}

static const char *tracing_word(void)
{
    uint32_t m = trace_get_mask();
    return m & TRACE_ENABLE ? "on" : m & TRACE_PAUSED ? "paused" : "off";
}

static void header(char *row, unsigned size)
{
    uint64_t hz = tsc_hz(), up = hz ? (rdtsc() - uptime_boot_tsc()) / hz : 0;
    uint64_t recorded = 0, overwritten = 0;
    if (count_events)
        count_events(&recorded, &overwritten);
    ksnprintf(row, size, " baretrace  cpus %u  up %lu:%02lu:%02lu  tracing %s  events %lu"
              "  overwritten %lu", cpus_online, up / 3600, up / 60 % 60, up % 60, tracing_word(),
              recorded, overwritten);
}

static void dump_row(char *row, unsigned size)
{
    uint64_t pct = dump.events_total ? dump.events_sent * 100 / dump.events_total : 0;
    if (dump.state == DUMP_SENDING)
        ksnprintf(row, size, " dump %lu: sending on the UART, %lu lines, %lu%% of %lu events",
                  dump.no, dump.lines, pct > 100 ? 100 : pct, dump.events_total);
    else if (dump.state == DUMP_DONE)
        ksnprintf(row, size, " dump %lu: done, %lu lines, %lu events  |  keys: d dump  p newest"
                  "  s stats  t tracing  h help", dump.no, dump.lines, dump.events_sent);
    else
        ksnprintf(row, size, " no dump yet  |  keys: d dump  p newest  s stats  t tracing"
                  "  h help");
}

/* Copy a NUL-terminated row into a fixed-width cell row. */
static void pad(char *dst, const char *src, unsigned cols)
{
    unsigned i = 0;
    for (; i < cols && src[i]; i++)
        dst[i] = src[i];
    memset(dst + i, ' ', cols - i);
}

void status_compose(char *row0, char *row1, unsigned cols)
{
    char text[ROW_MAX];
    header(text, sizeof text);
    pad(row0, text, cols);
    dump_row(text, sizeof text);
    pad(row1, text, cols);
}
