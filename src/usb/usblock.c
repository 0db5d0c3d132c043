/* usblock.c — one CPU at a time in the USB code (usblock.h). */
#include "usb/usblock.h"
#include "arch/spinlock.h"

static struct spinlock usb_lock;

bool usb_try_enter(void) { return spin_trylock(&usb_lock); }
void usb_leave(void) { spin_unlock(&usb_lock); }
