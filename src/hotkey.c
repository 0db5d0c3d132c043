/* hotkey.c — read input bytes and run the command each key names. */
#include "hotkey.h"
#include "arch/cpu.h"
#include "console/serial.h"
#include "dev/keyboard.h"
#include "firmware/cmdline.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "maskprompt.h"
#include "net/netcon.h"
#include "perf/summary.h"
#include "perf/workload.h"
#include "recorder/control.h"
#include "recorder/dump.h"
#include "recorder/prevboot.h"
#include "recorder/stream.h"
#include "recorder/table.h"
#include "time/deadline.h"
#include "time/stats.h"
#include "time/timer.h"
#include "trace/trace.h"
#include "usb/usbstack.h"

#define POLL_BUDGET   64                /* keys handled per wake-up */
/* Input is read at least this often, whatever timer_hz says: a USB
 * keyboard reports state, not a queue, and a short press lasts some tens
 * of ms; boot keyboards ask to be polled every 10 ms. */
#define INPUT_POLL_HZ 100

static uint64_t ignored, serial_bytes;

void hotkey_init(unsigned keyboard)
{
    if (keyboard == CMDLINE_KEYBOARD_USB) {
        kprintf("keyboard: PS/2 controller left alone (keyboard=usb)\n");
        return;                     /* keyboard_poll then reports nothing */
    }
    keyboard_init();                /* false without an i8042: then no PS/2 keys */
}

static void key_dump(void) { dump_all(); }
static void key_print(void) { table_print_newest(false); }
static void key_toggle(void) { control_toggle(); }
/* The timer statistics too. Not while a stream runs: its parts tile each
 * CPU's seqs from the stream's start, which a clear would cut. */
static void key_clear(void)
{
    if (stream_running()) {
        kprintf("trace: clear refused: a stream is running (n stops it)\n");
        return;
    }
    control_clear(stats_clear);
}
static void key_stats(void) { summary_print(ignored, usb_keys_dropped(), false); }
/* S: the per-CPU tables of s and p, however many CPUs. */
static void key_full(void)
{
    summary_print(ignored, usb_keys_dropped(), true);
    table_print_newest(true);
}
static void key_mask(void) { maskprompt_open(); }
static void key_previous(void) { prevboot_dump(); }
static void key_stream(void) { stream_toggle(); }

static const struct hotkey {
    char key, also;                   /* also: a second key, or 0 */
    enum hotkey_action action;
    void (*verb)(void);
    const char *help;
} keys[] = {
#define HOTKEY(id, key, also, NAME, verb, help, doc) { key, also, HK_##NAME, verb, help },
#include "hotkeys.def"
#undef HOTKEY
};
#define NKEYS (sizeof keys / sizeof keys[0])

void hotkey_help(void)
{
    workload_help();                  /* first: "keys:" ends the help */
    char line[256];
    size_t at = 0;
    for (unsigned i = 0; i < NKEYS && at < sizeof line; i++) {
        const struct hotkey *k = &keys[i];
        char also[3] = { k->also ? ' ' : 0, k->also, 0 };
        at += (size_t)ksnprintf(line + at, sizeof line - at, "%s%c%s %s", i ? " | " : "",
                                k->key, also, k->help);
    }
    kprintf("keys: %s\n", line);
}

static const struct hotkey *key_of(int key)
{
    for (unsigned i = 0; i < NKEYS; i++)
        if (key && (keys[i].key == key || keys[i].also == key))
            return &keys[i];
    return NULL;
}

static void run(int key)
{
    const struct hotkey *k = key_of(key);
    enum hotkey_action a = k ? k->action : workload_has_key(key) ? HK_WORKLOAD
                                                                 : HK_IGNORED;
    trace(HOTKEY, (uint64_t)key, a);
    if (k)
        k->verb();
    else if (a == HK_WORKLOAD)
        workload_key(key);            /* runs from the idle loop (perf/workload.h) */
    else
        ignored++;
}

/* One input byte: to the mask prompt while it is open, else a hotkey. */
static void input(int c)
{
    if (maskprompt_active())
        maskprompt_byte(c);
    else
        run(c);
}

void hotkey_wait(void)
{
    irq_enable();
    if (timer_hz() >= INPUT_POLL_HZ) {
        cpu_halt();                       /* sti; hlt: the next tick comes soon enough */
        return;
    }
    /* Slower ticks (timer_hz=1 for a quiet trace): no extra interrupt,
     * the keys CPU waits awake (interrupts on) until the next poll. */
    struct deadline end = deadline_in_us(1000000 / INPUT_POLL_HZ);
    while (!deadline_passed(end))
        cpu_relax();
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
        if (c >= 0) {
            trace(USB_KEY, usage, mods);
            input(c);
            continue;
        }
        c = netcon_getc();
        if (c < 0)
            return;
        trace(NET_KEY, (uint64_t)c, 0);
        input(c);
    }
}
