/* keyboard.c — i8042 output-buffer polling; decoding is scancode.c. */
#include "dev/keyboard.h"
#include "arch/cpu.h"
#include "dev/scancode.h"

#define I8042_DATA   0x60
#define I8042_STATUS 0x64
#define STATUS_OBF   0x01            /* output buffer full */
#define STATUS_AUX   0x20            /* the byte is from the mouse */
#define DRAIN_MAX    64

static bool present;
static struct scancode_state keys;

bool keyboard_init(void)
{
    uint8_t st = inb(I8042_STATUS);
    present = st != 0xFF;
    /* Drop whatever GRUB left behind (bounded: a stuck OBF is not a key). */
    for (int i = 0; present && i < DRAIN_MAX && (inb(I8042_STATUS) & STATUS_OBF); i++)
        inb(I8042_DATA);
    return present;
}

int keyboard_poll(uint8_t *scancode)
{
    if (!present)
        return -1;
    for (int i = 0; i < DRAIN_MAX; i++) {
        uint8_t st = inb(I8042_STATUS);
        if (st == 0xFF || !(st & STATUS_OBF))
            return -1;
        uint8_t sc = inb(I8042_DATA);
        if (st & STATUS_AUX)
            continue;
        int key = scancode_feed(&keys, sc);
        if (key == SCANCODE_NONE)
            continue;
        *scancode = sc;
        return key;
    }
    return -1;
}
