/* deadline.c — bounded waits (see deadline.h). */
#include "time/deadline.h"
#include "arch/cpu.h"
#include "time/tsc.h"

struct deadline deadline_in_us(uint64_t us)
{
    return (struct deadline){ rdtsc() + tsc_from_us(us) };
}

bool deadline_passed_at(struct deadline d, uint64_t now)
{
    return (int64_t)(now - d.end) > 0;
}

bool deadline_passed(struct deadline d)
{
    return deadline_passed_at(d, rdtsc());
}

bool wait_until(uint32_t (*read)(void *ctx), void *ctx, uint32_t mask, uint32_t want,
                struct deadline d)
{
    while ((read(ctx) & mask) != want) {
        if (deadline_passed(d))
            return (read(ctx) & mask) == want;
        cpu_relax();
    }
    return true;
}

static uint32_t read_mmio32(void *reg)
{
    return *(const volatile uint32_t *)reg;
}

/* The port number travels as the context pointer. */
static uint32_t read_io16(void *port)
{
    return inw((uint16_t)(uintptr_t)port);
}

bool wait_mmio32(const volatile void *reg, uint32_t mask, uint32_t want, uint64_t us)
{
    return wait_until(read_mmio32, (void *)(uintptr_t)reg, mask, want, deadline_in_us(us));
}

bool wait_io16(uint16_t port, uint16_t mask, uint16_t want, uint64_t us)
{
    return wait_until(read_io16, (void *)(uintptr_t)port, mask, want,
                      deadline_in_us(us));
}
