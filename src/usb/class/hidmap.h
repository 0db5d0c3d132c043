/* hidmap.h — HID boot-protocol keyboard reports to hotkey characters
 * (HID 1.11 appendix B.1; usages from the HID Usage Tables, page 7).
 * Pure: no hardware, host unit tested (test/unit/test_hid.c).
 *
 * A report is 8 bytes: modifiers, reserved, then up to six usages of the
 * keys held down. A key counts once, in the first report that has it;
 * holding it or pressing others alongside does not repeat it. A report
 * of ErrorRollOver (too many keys) changes nothing. Keys the serial and
 * PS/2 paths know are mapped to the same ASCII (letters, digits,
 * punctuation, Enter '\n', Esc 0x1B, Backspace '\b', Shift for capitals
 * and '?'); any key pressed with Ctrl, Alt or GUI held, and keys with no
 * ASCII meaning, map to 0 (the caller counts them as ignored). */
#ifndef USB_CLASS_HIDMAP_H
#define USB_CLASS_HIDMAP_H
#include <stdint.h>

#define HID_REPORT_LEN 8
#define HID_KEYS       6
#define HID_MOD_CTRL   0x11          /* left | right */
#define HID_MOD_SHIFT  0x22
#define HID_MOD_ALT    0x44
#define HID_MOD_GUI    0x88

struct hidmap_state {
    uint8_t down[HID_KEYS];           /* usages held in the previous report */
};

struct hid_key {
    uint8_t usage;
    uint8_t mods;
    char ascii;                    /* 0: not a hotkey */
};

/* Keys newly pressed in `report` (len bytes; shorter than 8 = ignored),
 * at most `max` of them, written to out[]; returns how many. */
unsigned hidmap_report(struct hidmap_state *s, const uint8_t *report, unsigned len,
                       struct hid_key *out, unsigned max);
/* The character of one usage with these modifiers, 0 if none. */
char hidmap_ascii(uint8_t usage, uint8_t mods);

#endif
