/* prevboot.h — the previous boot's trace, kept across a warm reset.
 *
 * prevboot_find(), right after mem_init and before anything allocates,
 * looks for the region the previous boot's rings lived in (persist.h) at
 * every 2 MiB boundary of available memory, takes the intact one with the
 * highest boot number, reserves it so that nothing in this boot writes
 * over it (this boot traces into a region of its own), checks each of its
 * rings and says on the console what it found: nothing (a cold boot, or
 * its memory reused or cleared), a damaged header, damaged rings or slots, or
 * how many events it holds. Key `l` dumps it (boot=previous). */
#ifndef RECORDER_PREVBOOT_H
#define RECORDER_PREVBOOT_H
#include <stdint.h>

void prevboot_find(void);
/* This boot's number: the previous one's + 1, or 1. */
uint64_t prevboot_next_boot(void);
/* Bytes the previous boot's kept trace holds (reserved), or 0. */
uint64_t prevboot_kept_bytes(void);
/* Events the previous boot's intact rings hold (READY prev_events=). */
uint64_t prevboot_events(void);
/* Key `l`: dump them; returns the events written. */
uint64_t prevboot_dump(void);

#endif
