/* hidmap.c — boot report diffing and usage -> ASCII. */
#include "usb/class/hidmap.h"

#define USAGE_ROLLOVER  0x01          /* ErrorRollOver; 0x02, 0x03: other errors */
#define USAGE_FIRST_KEY 0x04          /* 'a' */
#define USAGE_KP_ENTER  0x58
#define USAGE_LAST_KEY  0x38          /* '/' */
#define MAPPED          (USAGE_LAST_KEY - USAGE_FIRST_KEY + 1)

/* Usages 0x04..0x38, unshifted and shifted (0x32, non-US '#': none). */
static const char plain[MAPPED + 1] =
    "abcdefghijklmnopqrstuvwxyz1234567890\n\033\b\t -=[]\\\0;'`,./";
static const char shifted[MAPPED + 1] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ!@#$%^&*()\n\033\b\t _+{}|\0:\"~<>?";

char hidmap_ascii(uint8_t usage, uint8_t mods)
{
    if (mods & (HID_MOD_CTRL | HID_MOD_ALT | HID_MOD_GUI))
        return 0;
    if (usage == USAGE_KP_ENTER)
        return '\n';
    if (usage < USAGE_FIRST_KEY || usage > USAGE_LAST_KEY)
        return 0;
    const char *map = mods & HID_MOD_SHIFT ? shifted : plain;
    return map[usage - USAGE_FIRST_KEY];
}

/* Is `usage` among the first n usages of keys? */
static int among(const uint8_t *keys, unsigned n, uint8_t usage)
{
    for (unsigned k = 0; k < n; k++)
        if (keys[k] == usage)
            return 1;
    return 0;
}

unsigned hidmap_report(struct hidmap_state *s, const uint8_t *report, unsigned len,
                       struct hid_key *out, unsigned max)
{
    if (len < HID_REPORT_LEN)
        return 0;
    const uint8_t *keys = report + 2;
    for (unsigned k = 0; k < HID_KEYS; k++)
        if (keys[k] >= USAGE_ROLLOVER && keys[k] < USAGE_FIRST_KEY)
            return 0;                       /* phantom state: keep what was held */
    unsigned n = 0;
    for (unsigned k = 0; k < HID_KEYS; k++) {
        uint8_t u = keys[k];
        if (!u || among(s->down, HID_KEYS, u) || among(keys, k, u))
            continue;
        if (n < max)
            out[n++] = (struct hid_key){ u, report[0], hidmap_ascii(u, report[0]) };
    }
    for (unsigned k = 0; k < HID_KEYS; k++)
        s->down[k] = keys[k];
    return n;
}
