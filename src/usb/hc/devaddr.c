/* devaddr.c — SET_ADDRESS and the addresses it hands out (USB 2.0
 * §9.4.6, §9.2.6.3). */
#include "usb/hc/devaddr.h"
#include "time/tsc.h"
#include "usb/core/hcd.h"
#include "usb/core/say.h"
#include "usb/core/xfer.h"

#define USB_ADDR_MAX            127
#define SET_ADDRESS_RECOVERY_US 2000  /* the device answers at its address after 2 ms */
#define REQ_SET_ADDRESS         5

uint8_t usb_addr_assign(struct usb_dev *d, struct usb_addrs *a)
{
    uint8_t addr = 1;
    while (addr <= USB_ADDR_MAX && (a->used[addr / 32] & (1u << (addr % 32))))
        addr++;
    if (addr > USB_ADDR_MAX) {
        usb_say(d, "no free USB address (127 in use); device skipped");
        return 0;
    }
    uint64_t setup = REQ_SET_ADDRESS << 8 | (uint32_t)addr << 16;
    int cc = d->hc->ops->control(d, setup, NULL, 0, USB_CTRL_TIMEOUT_US);
    if (cc != CC_SUCCESS) {
        usb_say(d, "SET_ADDRESS failed (completion %d); device skipped", cc);
        return 0;
    }
    a->used[addr / 32] |= 1u << (addr % 32);
    tsc_delay_us(SET_ADDRESS_RECOVERY_US);
    return addr;
}

void usb_addr_release(struct usb_addrs *a, uint8_t addr)
{
    if (addr && addr <= USB_ADDR_MAX)
        a->used[addr / 32] &= ~(1u << (addr % 32));
}
