/* hotkey.h — single-key commands on COM1, the PS/2 keyboard and USB
 * keyboards (usb/hid.h).
 *
 *   d  dump every CPU's ring (machine format)   p  newest events, readable
 *   t  tracing on/off                           c  clear rings and counters
 *   s  statistics summary                       h ? this list
 *   m  traced categories (a one-line prompt, trace/maskprompt.h)
 *   digits  start a workload: the keys of trace/workloads.def (perf/
 *        workload.h; the help's `workloads:` line lists them)
 *
 * Any other byte is counted as ignored (and traced as input); bursts of
 * junk, held keys and keys pressed during a dump are all safe. The BSP
 * polls for input whenever it wakes (at least every timer tick). */
#ifndef HOTKEY_H
#define HOTKEY_H
#include <stdint.h>

enum hotkey_action {
    HK_IGNORED, HK_DUMP, HK_PRINT, HK_TOGGLE, HK_CLEAR, HK_STATS, HK_HELP,
    HK_WORKLOAD,                       /* start a workload */
    HK_MASK,                           /* open the category prompt */
    HK_PREVIOUS,                       /* dump the previous boot's rings */
};

void     hotkey_init(void);
void     hotkey_poll(void);            /* BSP only */
void     hotkey_help(void);

#endif
