/* scancode.h — PS/2 scan code set 1 to keys, with the modifiers tracked
 * (pure code, tested on the host: test/unit/test_scancode.c).
 *
 * Shift selects the shifted character. Ctrl and Alt (left, and the
 * E0-prefixed right ones) make a key a combination, which is never a
 * hotkey: Ctrl+C must not clear the rings nor Alt+D dump them, so such a
 * press is returned as SCANCODE_IGNORED for the caller to count. Modifier
 * presses and every release are consumed without a result. */
#ifndef DEV_SCANCODE_H
#define DEV_SCANCODE_H
#include <stdbool.h>
#include <stdint.h>

#define SCANCODE_NONE    (-1)      /* nothing to report (prefix, release, modifier) */
#define SCANCODE_IGNORED 0         /* a key press with no hotkey meaning */

struct scancode_state {
    bool extended;                 /* the last byte was the E0 prefix */
    bool shift_l, shift_r, ctrl_l, ctrl_r, alt_l, alt_r;
};

/* Feed one byte from the keyboard: SCANCODE_NONE, SCANCODE_IGNORED (a key
 * without ASCII, an extended key, or any key with Ctrl or Alt held), or
 * the key's ASCII. */
int scancode_feed(struct scancode_state *s, uint8_t byte);
/* Ctrl or Alt is held now. */
bool scancode_combining(const struct scancode_state *s);

#endif
