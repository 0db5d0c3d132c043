/* maskprompt.c — a one-line editor for the category mask. */
#include "maskprompt.h"
#include "arch/cpu.h"
#include "lib/kprintf.h"
#include "recorder/control.h"
#include "time/tsc.h"
#include "trace/trace.h"

#define LINE_MAX_CHARS 80
#define IDLE_TIMEOUT_S 30
#define KEY_ESC        0x1B
#define KEY_BS         0x08
#define KEY_DEL        0x7F

static char line[LINE_MAX_CHARS + 1];
static unsigned len;
static bool active;
static uint64_t last_key_tsc;

static void print_categories(const char *prefix)
{
    uint32_t cats = trace_get_mask() & TRACE_CAT_BITS;
    kprintf("%s", prefix);
    const char *sep = "";
    for (unsigned b = 0; trace_category_name(b); b++)
        if (cats & (1u << b)) {
            kprintf("%s%s", sep, trace_category_name(b));
            sep = ",";
        }
    kprintf("%s\n", *sep ? "" : "none");
}

void maskprompt_open(void)
{
    active = true;
    len = 0;
    last_key_tsc = rdtsc();
    print_categories("trace: categories now ");
    kprintf("mask> ");
}

bool maskprompt_active(void) { return active; }

static void apply(void)
{
    uint32_t cats;
    const char *bad;
    size_t bad_len;
    active = false;
    kprintf("\n");
    if (len == 0) {
        kprintf("trace: categories unchanged\n");
        return;
    }
    if (trace_parse_mask(line, len, &cats, &bad, &bad_len)) {
        kprintf("trace: unknown category '%.*s' (known: all none", (int)bad_len, bad);
        for (unsigned b = 0; trace_category_name(b); b++)
            kprintf(" %s", trace_category_name(b));
        kprintf("); categories unchanged\n");
        return;
    }
    /* Recorded before the change, which may switch the TRACE category off. */
    control_set_categories(cats);
    print_categories("trace: categories now ");
}

static bool name_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == ',' || c == '_' || c == ' ';
}

void maskprompt_byte(int c)
{
    last_key_tsc = rdtsc();
    if (c == '\r' || c == '\n') {
        apply();
    } else if (c == KEY_ESC) {
        active = false;
        kprintf("\ntrace: mask prompt cancelled\n");
    } else if ((c == KEY_BS || c == KEY_DEL) && len) {
        len--;
        kprintf("\b \b");
    } else if (name_char(c) && len < LINE_MAX_CHARS && c != ' ') {
        line[len++] = (char)c;
        kprintf("%c", c);
    }
}

void maskprompt_tick(void)
{
    if (active && rdtsc() - last_key_tsc > tsc_from_us(IDLE_TIMEOUT_S * 1000000ull)) {
        active = false;
        kprintf("\ntrace: mask prompt timed out; categories unchanged\n");
    }
}
