/* hotkey.h — single-key commands on COM1, the PS/2 keyboard, USB
 * keyboards (usb/usbstack.h) and the network (net/netcon.h: only with
 * the session code).
 *
 * The keys are the rows of hotkeys.def (d dump, p newest events, t
 * tracing on/off, c clear, s statistics, m traced categories, l the
 * previous boot's dump, h ? help); digits start a workload: the keys of
 * recorder/workloads.def (perf/workload.h; the help's `workloads:` line
 * lists them).
 *
 * Any other byte is counted as ignored (and traced as input); bursts of
 * junk, held keys and keys pressed during a dump are all safe. The BSP
 * polls for input whenever it wakes: at every timer tick, and at least
 * 100 times a second whatever timer_hz is (hotkey_wait). */
#ifndef HOTKEY_H
#define HOTKEY_H
#include <stdint.h>

/* The action a HOTKEY event records (its second argument). */
enum hotkey_action {
    HK_IGNORED = 0,                   /* no command: counted, shown by s */
    HK_WORKLOAD = 7,                   /* start a workload */
#define HOTKEY(id, key, also, NAME, verb, help, doc) HK_##NAME = id,
#include "hotkeys.def"
#undef HOTKEY
};

/* keyboard: CMDLINE_KEYBOARD_* (keyboard=usb leaves the i8042 untouched). */
void hotkey_init(unsigned keyboard);
void hotkey_poll(void);            /* BSP only */
/* The keys CPU's wait between two hotkey_poll()s (called with interrupts
 * off; returns with them on): until the next tick when ticks come at
 * least 100 times a second, else awake for 10 ms, so that keys are read
 * at that rate even at timer_hz=1 (without adding an interrupt). */
void hotkey_wait(void);
void hotkey_help(void);

#endif
