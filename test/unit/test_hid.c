/* test_hid.c — USB boot keyboard reports to hotkey characters. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "usb/class/hidmap.h"

static struct hidmap_state st;
static struct hid_key keys[HID_KEYS];

/* Feed a report (modifiers + up to six usages); return keys pressed. */
static unsigned feed(uint8_t mods, uint8_t k0, uint8_t k1, uint8_t k2)
{
    uint8_t r[HID_REPORT_LEN] = { mods, 0, k0, k1, k2, 0, 0, 0 };
    return hidmap_report(&st, r, sizeof r, keys, HID_KEYS);
}

static void test_ascii(void)
{
    CHECK_EQ(hidmap_ascii(0x04, 0), 'a');
    CHECK_EQ(hidmap_ascii(0x1D, 0), 'z');
    CHECK_EQ(hidmap_ascii(0x07, 0), 'd');
    CHECK_EQ(hidmap_ascii(0x07, 0x02), 'D');       /* left shift */
    CHECK_EQ(hidmap_ascii(0x07, 0x20), 'D');       /* right shift */
    CHECK_EQ(hidmap_ascii(0x1E, 0), '1');
    CHECK_EQ(hidmap_ascii(0x26, 0), '9');
    CHECK_EQ(hidmap_ascii(0x27, 0), '0');
    CHECK_EQ(hidmap_ascii(0x28, 0), '\n');         /* Enter */
    CHECK_EQ(hidmap_ascii(0x58, 0), '\n');         /* keypad Enter */
    CHECK_EQ(hidmap_ascii(0x29, 0), 0x1B);         /* Esc */
    CHECK_EQ(hidmap_ascii(0x2A, 0), '\b');         /* Backspace */
    CHECK_EQ(hidmap_ascii(0x2C, 0), ' ');
    CHECK_EQ(hidmap_ascii(0x36, 0), ',');
    CHECK_EQ(hidmap_ascii(0x38, 0), '/');
    CHECK_EQ(hidmap_ascii(0x38, 0x02), '?');       /* the other help key */
    CHECK_EQ(hidmap_ascii(0x32, 0), 0);            /* non-US #: nothing */
    CHECK_EQ(hidmap_ascii(0x39, 0), 0);            /* Caps Lock */
    CHECK_EQ(hidmap_ascii(0x3A, 0), 0);            /* F1 */
    CHECK_EQ(hidmap_ascii(0xE0, 0), 0);            /* a modifier as a usage */
    CHECK_EQ(hidmap_ascii(0xFF, 0), 0);
    CHECK_EQ(hidmap_ascii(0x07, 0x01), 0);         /* Ctrl+D: not a hotkey */
    CHECK_EQ(hidmap_ascii(0x07, 0x10), 0);         /* right Ctrl */
    CHECK_EQ(hidmap_ascii(0x07, 0x04), 0);         /* Alt */
    CHECK_EQ(hidmap_ascii(0x07, 0x40), 0);         /* AltGr */
    CHECK_EQ(hidmap_ascii(0x07, 0x08), 0);         /* GUI */
}

static void test_press_once(void)
{
    memset(&st, 0, sizeof st);
    CHECK_EQ(feed(0, 0x07, 0, 0), 1);              /* d down */
    CHECK_EQ(keys[0].ascii, 'd');
    CHECK_EQ(keys[0].usage, 0x07);
    CHECK_EQ(feed(0, 0x07, 0, 0), 0);              /* held: no repeat */
    CHECK_EQ(feed(0, 0x07, 0, 0), 0);
    CHECK_EQ(feed(0, 0, 0, 0), 0);                 /* released */
    CHECK_EQ(feed(0, 0x07, 0, 0), 1);              /* pressed again */
}

static void test_rollover(void)
{
    memset(&st, 0, sizeof st);
    CHECK_EQ(feed(0, 0x07, 0, 0), 1);              /* d */
    CHECK_EQ(feed(0, 0x07, 0x16, 0), 1);           /* d held, s added */
    CHECK_EQ(keys[0].ascii, 's');
    CHECK_EQ(feed(0, 0x16, 0x07, 0), 0);           /* same keys, other order */
    CHECK_EQ(feed(0, 0x16, 0, 0), 0);              /* d released */
    CHECK_EQ(feed(0, 0x16, 0x07, 0x0B), 2);        /* d again and h */
    CHECK_EQ(keys[0].ascii, 'd');
    CHECK_EQ(keys[1].ascii, 'h');
    /* Too many keys: ErrorRollOver in every slot changes nothing. */
    CHECK_EQ(feed(0, 0x01, 0x01, 0x01), 0);
    CHECK_EQ(feed(0, 0x16, 0x07, 0x0B), 0);        /* still held: no new press */
    /* A usage twice in one report counts once. */
    memset(&st, 0, sizeof st);
    CHECK_EQ(feed(0, 0x04, 0x04, 0), 1);
}

static void test_modifiers(void)
{
    memset(&st, 0, sizeof st);
    CHECK_EQ(feed(0x01, 0, 0, 0), 0);              /* Ctrl alone: no key */
    CHECK_EQ(feed(0x01, 0x07, 0, 0), 1);           /* Ctrl+D: a key, not a hotkey */
    CHECK_EQ(keys[0].ascii, 0);
    CHECK_EQ(keys[0].mods, 0x01);
    CHECK_EQ(feed(0x00, 0x07, 0, 0), 0);           /* Ctrl let go, d still held */
    CHECK_EQ(feed(0, 0, 0, 0), 0);
    CHECK_EQ(feed(0x02, 0x38, 0, 0), 1);           /* Shift+/ */
    CHECK_EQ(keys[0].ascii, '?');
}

static void test_bad_reports(void)
{
    memset(&st, 0, sizeof st);
    uint8_t r[HID_REPORT_LEN] = { 0, 0, 0x07 };
    CHECK_EQ(hidmap_report(&st, r, 3, keys, HID_KEYS), 0);    /* short: ignored */
    CHECK_EQ(hidmap_report(&st, r, 8, keys, 0), 0);           /* no room */
    uint8_t six[HID_REPORT_LEN] = { 0, 0, 4, 5, 6, 7, 8, 9 };
    memset(&st, 0, sizeof st);
    CHECK_EQ(hidmap_report(&st, six, 8, keys, HID_KEYS), 6);
    CHECK_EQ(keys[5].ascii, 'f');
}

int main(void)
{
    test_ascii();
    test_press_once();
    test_rollover();
    test_modifiers();
    test_bad_reports();
    return check_summary("test_hid");
}
