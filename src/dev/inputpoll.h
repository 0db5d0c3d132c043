/* inputpoll.h — "read the keys now", for code that keeps the boot CPU
 * busy for long (the stress workload) and lower than the key handling.
 *
 * kmain installs the keys' poll here (and a stream's, recorder/stream.h); perf/ calls inputpoll_run() instead of
 * including hotkey.h, whose commands start workloads: no include or call
 * circle between the keys and the workloads they start. */
#ifndef DEV_INPUTPOLL_H
#define DEV_INPUTPOLL_H

void inputpoll_set(void (*poll)(void));
void inputpoll_run(void);              /* no-op until inputpoll_set */

#endif
