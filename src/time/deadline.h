/* deadline.h — one way to wait with a bound: a deadline made from
 * microseconds of the calibrated TSC, and the register waits built on it
 * (as Linux's readl_poll_timeout and memtest86+'s wait_until_clr/set).
 *
 * A wait returns whether its condition came true; when it did not, the
 * caller names the device and the step (every wait bounded and named).
 * Once the bound has passed, the register is read one last time, so a
 * poll that was held up (an SMI, a slow emulator) never fails a register
 * that did become ready in time. Needs tsc_init(). */
#ifndef TIME_DEADLINE_H
#define TIME_DEADLINE_H
#include <stdbool.h>
#include <stdint.h>

struct deadline {
    uint64_t end;
};          /* a TSC value */

/* Now plus `us` microseconds. */
struct deadline deadline_in_us(uint64_t us);
/* `now` (a TSC value) is past d; wrap-safe while the two lie within 2^63
 * ticks of each other (pure). */
bool deadline_passed_at(struct deadline d, uint64_t now);
/* The TSC now is past d. */
bool deadline_passed(struct deadline d);

/* Poll until (read(ctx) & mask) == want, or d passes: the loop of the
 * register waits below, for any reader. */
bool wait_until(uint32_t (*read)(void *ctx), void *ctx, uint32_t mask, uint32_t want,
                struct deadline d);
/* A 32-bit memory-mapped register, at most `us` microseconds. */
bool wait_mmio32(const volatile void *reg, uint32_t mask, uint32_t want, uint64_t us);
/* A 16-bit I/O port, at most `us` microseconds. */
bool wait_io16(uint16_t port, uint16_t mask, uint16_t want, uint64_t us);

#endif
