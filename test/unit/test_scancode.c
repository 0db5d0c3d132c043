/* test_scancode.c — set 1 decoding: plain and shifted keys, releases,
 * and Ctrl/Alt (left and E0-prefixed right) turning keys into ignored
 * combinations. */
#include "check.h"
#include "dev/scancode.h"

#define C   0x2E       /* make code of c */
#define D   0x20       /* d */
#define REL 0x80

static int feed(struct scancode_state *s, const uint8_t *bytes, int n)
{
    int last = SCANCODE_NONE;
    for (int i = 0; i < n; i++) {
        int k = scancode_feed(s, bytes[i]);
        if (k != SCANCODE_NONE)
            last = k;
    }
    return last;
}

#define FEED(s, ...) feed(s, (const uint8_t[]){ __VA_ARGS__ }, \
                          (int)sizeof((const uint8_t[]){ __VA_ARGS__ }))

static void test_plain_and_shift(void)
{
    struct scancode_state s = { 0 };
    CHECK_EQ(scancode_feed(&s, D), 'd');
    CHECK_EQ(scancode_feed(&s, D | REL), SCANCODE_NONE);
    CHECK_EQ(FEED(&s, 0x2A, D), 'D');                  /* left shift held */
    CHECK_EQ(FEED(&s, 0xAA, D), 'd');                  /* released */
    CHECK_EQ(FEED(&s, 0x36, 0x35), '?');               /* right shift + / */
    CHECK_EQ(FEED(&s, 0x2A, 0xB6, 0x35), '?');         /* one shift still held */
    CHECK_EQ(FEED(&s, 0xAA, 0x35), '/');
    /* E0 2A is a fake shift (Print Screen): no Shift state. */
    CHECK_EQ(FEED(&s, 0xE0, 0x2A, D), 'd');
    CHECK_EQ(FEED(&s, 0xE0, 0x48), SCANCODE_IGNORED);  /* arrow up: extended */
    CHECK_EQ(scancode_feed(&s, 0x3B), SCANCODE_IGNORED);  /* F1: beyond the table */
}

static void test_ctrl_alt(void)
{
    struct scancode_state s = { 0 };
    CHECK_EQ(scancode_feed(&s, 0x1D), SCANCODE_NONE);  /* left Ctrl: silent */
    CHECK(scancode_combining(&s));
    CHECK_EQ(scancode_feed(&s, C), SCANCODE_IGNORED);  /* Ctrl+C is no clear */
    CHECK_EQ(FEED(&s, C | REL, 0x9D, C), 'c');         /* Ctrl up: c again */
    CHECK_EQ(FEED(&s, 0x38, D), SCANCODE_IGNORED);     /* left Alt + d: no dump */
    CHECK_EQ(FEED(&s, 0xB8, D), 'd');
    CHECK_EQ(FEED(&s, 0xE0, 0x1D, C), SCANCODE_IGNORED);   /* right Ctrl */
    CHECK_EQ(FEED(&s, 0xE0, 0x9D, C), 'c');
    CHECK_EQ(FEED(&s, 0xE0, 0x38, D), SCANCODE_IGNORED);   /* right Alt (AltGr) */
    CHECK(scancode_combining(&s));
    CHECK_EQ(FEED(&s, 0xE0, 0xB8, D), 'd');
    CHECK(!scancode_combining(&s));
    /* Both Ctrls down, one released: still a combination. */
    CHECK_EQ(FEED(&s, 0x1D, 0xE0, 0x1D, 0x9D, D), SCANCODE_IGNORED);
    CHECK_EQ(FEED(&s, 0xE0, 0x9D, D), 'd');
    /* Ctrl+Shift+D: ignored too. */
    CHECK_EQ(FEED(&s, 0x2A, 0x1D, D), SCANCODE_IGNORED);
    CHECK_EQ(FEED(&s, 0x9D, 0xAA, D), 'd');
}

int main(void)
{
    test_plain_and_shift();
    test_ctrl_alt();
    return check_summary("test_scancode");
}
