/* console.c — serialised kernel output to the UART and the screen. */
#include "console.h"
#include "format.h"
#include "screen.h"
#include "serial.h"
#include "spinlock.h"
#include "percpu.h"

#define LINE_MAX_LEN 512
#define NO_OWNER     0xFFFFFFFFu

static struct spinlock lock;
static volatile uint32_t owner = NO_OWNER;  /* CPU index holding the lock */
static uint32_t depth;                      /* re-entry from a fault handler */
static uint64_t saved_flags;

/* Before GS_BASE is set (the first instructions of each CPU) we cannot ask
 * who we are; treat those callers as the boot CPU, which is the only one
 * printing at that point. */
static uint32_t me(void)
{
    return gs_ready() ? this_cpu()->index : 0;
}

void console_lock(void)
{
    uint64_t flags = irq_save();
    uint32_t cpu = me();
    if (owner == cpu) {                 /* a fault while printing: go on */
        depth++;
        return;
    }
    spin_lock(&lock);
    owner = cpu;
    depth = 1;
    saved_flags = flags;
}

void console_unlock(void)
{
    if (--depth)
        return;
    uint64_t flags = saved_flags;
    owner = NO_OWNER;
    spin_unlock(&lock);
    irq_restore(flags);
}

void console_write_locked(const char *s, unsigned long n)
{
    serial_write(s, n);
    screen_write(s, n);             /* text buffer only: drawn later (screen.h) */
}

void console_write_uart_locked(const char *s, unsigned long n)
{
    serial_write(s, n);
}

int kprintf(const char *fmt, ...)
{
    char line[LINE_MAX_LEN];
    va_list ap;
    va_start(ap, fmt);
    int n = kvsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof line)
        n = sizeof line - 1;
    console_lock();
    console_write_locked(line, (unsigned long)n);
    console_unlock();
    return n;
}
