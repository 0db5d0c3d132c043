/* hotkey.c — read input bytes and run the command each key names. */
#include "hotkey.h"
#include "console.h"
#include "keyboard.h"
#include "serial.h"
#include "perf/summary.h"
#include "stats.h"
#include "perf/workload.h"
#include "trace/control.h"
#include "trace/dump.h"
#include "trace/maskprompt.h"
#include "trace/prevboot.h"
#include "trace/table.h"
#include "trace/trace.h"
#include "usb/usbstack.h"

#define POLL_BUDGET 64                /* keys handled per wake-up */

static uint64_t ignored, serial_bytes;
static uint64_t kbd_present;

void hotkey_init(void)
{
    kbd_present = keyboard_init();
}

void hotkey_help(void)
{
    workload_help();                  /* first: "keys:" ends the help */
    kprintf("keys: d dump rings | p newest events | t tracing on/off | c clear | "
            "s statistics | m trace mask | l previous boot's dump | h ? help\n");
}

static enum hotkey_action action_of(int key)
{
    switch (key) {
    case 'd': return HK_DUMP;
    case 'p': return HK_PRINT;
    case 't': return HK_TOGGLE;
    case 'c': return HK_CLEAR;
    case 's': return HK_STATS;
    case 'h': case '?': return HK_HELP;
    case 'm': return HK_MASK;
    case 'l': return HK_PREVIOUS;
    default:  return workload_has_key(key) ? HK_WORKLOAD : HK_IGNORED;
    }
}

static void run(int key)
{
    enum hotkey_action a = action_of(key);
    trace(HOTKEY, (uint64_t)key, a);
    switch (a) {
    case HK_DUMP:
        dump_all();
        break;
    case HK_PRINT:
        table_print_newest();
        break;
    case HK_TOGGLE:
        control_toggle();
        break;
    case HK_CLEAR:
        control_clear(stats_clear);   /* the timer statistics too */
        break;
    case HK_STATS:
        summary_print(ignored);
        break;
    case HK_HELP:
        hotkey_help();
        break;
    case HK_MASK:
        maskprompt_open();
        break;
    case HK_PREVIOUS:
        prevboot_dump();
        break;
    case HK_WORKLOAD:
        workload_key(key);           /* runs from the idle loop (perf/workload.h) */
        break;
    case HK_IGNORED:
        ignored++;
        break;
    }
}

/* One input byte: to the mask prompt while it is open, else a hotkey. */
static void input(int c)
{
    if (maskprompt_active())
        maskprompt_byte(c);
    else
        run(c);
}

void hotkey_poll(void)
{
    maskprompt_tick();
    for (int i = 0; i < POLL_BUDGET; i++) {
        uint8_t sc;
        int c = serial_getc();
        if (c >= 0) {
            trace(SERIAL_RX, (uint64_t)c, ++serial_bytes);
            input(c);
            continue;
        }
        c = keyboard_poll(&sc);
        if (c >= 0) {
            trace(KBD_RX, sc, 0);
            input(c);
            continue;
        }
        uint8_t usage, mods;
        c = usb_key_poll(&usage, &mods);
        if (c < 0)
            return;
        trace(USB_KEY, usage, mods);
        input(c);
    }
}
