/* status.c — the status rows' text and the dump progress they show. */
#include "console/status.h"
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "console/screen.h"
#include "lib/format.h"
#include "lib/kstring.h"
#include "time/tsc.h"
#include "time/uptime.h"
#include "trace/rings.h"
#include "trace/trace.h"

#define ROW_MAX 256

enum dump_state { DUMP_NONE,
                  DUMP_SENDING,
                  DUMP_DONE,
                  DUMP_NOWHERE };

/* Progress of the current (or last) dump, as the dump reports it. */
static struct {
    enum dump_state state;
    uint64_t no, events_total, events_sent, lines;
    uint32_t nowhere;                   /* dumps that had nowhere to go */
} dump;

static char usb_text[ROW_MAX];          /* USB starting: what it does now */

void status_usb(const char *text)
{
    ksnprintf(usb_text, sizeof usb_text, "%s", text ? text : "");
    status_update();
    screen_flush();                     /* a step that takes long stays on the glass */
}

static char note[32];                   /* status_set_note's words */

void status_set_note(const char *words)
{
    ksnprintf(note, sizeof note, "%s", words);
    status_update();
}

static const char *route = "on the UART";   /* status_dump_route's words */

void status_dump_route(const char *where) { route = where; }

void status_dump_nowhere(uint32_t nowhere)
{
    dump.state = DUMP_NOWHERE;
    dump.nowhere = nowhere;
    status_update();
    screen_refresh();
}

void status_dump_progress(uint32_t dump_no, uint64_t lines, uint64_t events_sent,
                          uint64_t events_total, bool done)
{
    dump.state = done ? DUMP_DONE : DUMP_SENDING;
    dump.no = dump_no;
    dump.lines = lines;
    dump.events_sent = events_sent;
    dump.events_total = events_total;
    if (screen_due()) {             /* compose only what the screen will draw now */
        status_update();
        screen_refresh();
    }
}

static const char *tracing_word(void)
{
    uint32_t m = trace_get_mask();
    return m & TRACE_ENABLE ? "on" : m & TRACE_PAUSED ? "paused"
                                                      : "off";
}

static void header(char *row, unsigned size)
{
    uint64_t hz = tsc_hz(), up = hz ? (rdtsc() - uptime_boot_tsc()) / hz : 0;
    uint64_t recorded, overwritten;
    rings_event_counts(&recorded, &overwritten);    /* zeros until the rings exist */
    ksnprintf(row, size, " baretrace  cpus %u  up %lu:%02lu:%02lu  tracing %s  events %lu"
                         "  overwritten %lu%s%s",
              cpus_online, up / 3600, up / 60 % 60, up % 60,
              tracing_word(), recorded, overwritten, note[0] ? "  " : "", note);
}

static void dump_row(char *row, unsigned size)
{
    if (usb_text[0]) {
        ksnprintf(row, size, " %s", usb_text);
        return;
    }
    uint64_t pct = dump.events_total ? dump.events_sent * 100 / dump.events_total : 0;
    if (dump.state == DUMP_SENDING)
        ksnprintf(row, size, " dump %lu: sending %s, %lu lines, %lu%% of %lu events",
                  dump.no, route, dump.lines, pct > 100 ? 100 : pct, dump.events_total);
    else if (dump.state == DUMP_NOWHERE)
        ksnprintf(row, size, " dump not sent: no UART, network or stick to take it (%u so far)  |  "
                             "keys: s stats  h help",
                  dump.nowhere);
    else if (dump.state == DUMP_DONE)
        ksnprintf(row, size, " dump %lu: done, %lu lines, %lu events  |  keys: d dump  p newest"
                             "  s stats  t tracing  h help",
                  dump.no, dump.lines, dump.events_sent);
    else
        ksnprintf(row, size, " no dump yet  |  keys: d dump  p newest  s stats  t tracing"
                             "  h help");
}

void status_update(void)
{
    char text[ROW_MAX];
    header(text, sizeof text);
    screen_set_status(0, text);
    dump_row(text, sizeof text);
    screen_set_status(1, text);
}

void status_poll(void)
{
    if (screen_due())
        status_update();
    screen_poll();
}
