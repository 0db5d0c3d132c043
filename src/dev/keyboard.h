/* keyboard.h — PS/2 keyboard through the i8042, polled.
 *
 * Real UEFI machines often have no i8042 (status reads 0xFF): then the
 * keyboard is simply absent and serial is the only input. Scan code set 1
 * (what GRUB leaves, translated by the controller) is turned into the
 * ASCII of the key (scancode.h); keys with no ASCII meaning, and every
 * key pressed with Ctrl or Alt held, are returned as 0 so the caller
 * counts them as ignored. */
#ifndef DEV_KEYBOARD_H
#define DEV_KEYBOARD_H
#include <stdbool.h>
#include <stdint.h>

bool keyboard_init(void);           /* false when there is no controller */
/* Next key press: its ASCII (0 for keys without one) and raw scancode in
 * *scancode; -1 when nothing is waiting. Releases, modifier keys and
 * mouse bytes are consumed silently. */
int keyboard_poll(uint8_t *scancode);

#endif
