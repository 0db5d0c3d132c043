/* usblock.c — one CPU at a time in the USB code (usblock.h). */
#include "usb/core/usblock.h"
#include "arch/cpu.h"
#include "arch/spinlock.h"
#include "time/deadline.h"

static struct spinlock usb_lock;

bool usb_try_enter(void) { return spin_trylock(&usb_lock); }

bool usb_enter_wait(uint64_t wait_us)
{
    struct deadline end = deadline_in_us(wait_us);
    while (!spin_trylock(&usb_lock)) {
        if (deadline_passed(end))
            return false;
        cpu_relax();
    }
    return true;
}
void usb_leave(void) { spin_unlock(&usb_lock); }
