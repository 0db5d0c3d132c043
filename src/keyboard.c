/* keyboard.c — i8042 output-buffer polling and scan code set 1 decoding. */
#include "keyboard.h"
#include "cpu.h"

#define I8042_DATA    0x60
#define I8042_STATUS  0x64
#define STATUS_OBF    0x01            /* output buffer full */
#define STATUS_AUX    0x20            /* the byte is from the mouse */
#define SC_RELEASE    0x80
#define SC_EXTENDED   0xE0
#define SC_LSHIFT     0x2A
#define SC_RSHIFT     0x36
#define DRAIN_MAX     64

/* Set 1 make codes 0x00-0x39, unshifted and shifted. */
static const char plain[0x3A] =
    "\0\0331234567890-=\b\tqwertyuiop[]\n\0asdfghjkl;'`\0\\zxcvbnm,./\0*\0 ";
static const char shifted[0x3A] =
    "\0\033!@#$%^&*()_+\b\tQWERTYUIOP{}\n\0ASDFGHJKL:\"~\0|ZXCVBNM<>?\0*\0 ";

static bool present;
static bool shift, extended;

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
        if (sc == SC_EXTENDED) {
            extended = true;
            continue;
        }
        bool was_extended = extended, release = sc & SC_RELEASE;
        extended = false;
        uint8_t code = sc & ~SC_RELEASE;
        if (code == SC_LSHIFT || code == SC_RSHIFT) {
            shift = !release;
            continue;
        }
        if (release)
            continue;
        *scancode = sc;
        if (was_extended || code >= sizeof plain)
            return 0;
        return (unsigned char)(shift ? shifted : plain)[code];
    }
    return -1;
}
