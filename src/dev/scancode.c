/* scancode.c — scan code set 1 decoding with Shift, Ctrl and Alt. */
#include "dev/scancode.h"

#define SC_RELEASE  0x80
#define SC_EXTENDED 0xE0
#define SC_LSHIFT   0x2A
#define SC_RSHIFT   0x36
#define SC_CTRL     0x1D           /* left; E0 1D is right Ctrl */
#define SC_ALT      0x38           /* left; E0 38 is right Alt (AltGr) */

/* Set 1 make codes 0x00-0x39, unshifted and shifted. */
static const char plain[0x3A] =
    "\0\0331234567890-=\b\tqwertyuiop[]\n\0asdfghjkl;'`\0\\zxcvbnm,./\0*\0 ";
static const char shifted[0x3A] =
    "\0\033!@#$%^&*()_+\b\tQWERTYUIOP{}\n\0ASDFGHJKL:\"~\0|ZXCVBNM<>?\0*\0 ";

bool scancode_combining(const struct scancode_state *s)
{
    return s->ctrl_l || s->ctrl_r || s->alt_l || s->alt_r;
}

/* Modifier bytes update the state; true when `code` was one. E0 2A/E0 36
 * are the "fake shifts" some keyboards wrap around Print Screen and the
 * navigation keys: not a real Shift, consumed and forgotten. */
static bool modifier(struct scancode_state *s, uint8_t code, bool ext, bool down)
{
    switch (code) {
    case SC_LSHIFT:
        if (!ext) s->shift_l = down;
        return true;
    case SC_RSHIFT:
        if (!ext) s->shift_r = down;
        return true;
    case SC_CTRL: *(ext ? &s->ctrl_r : &s->ctrl_l) = down; return true;
    case SC_ALT:  *(ext ? &s->alt_r : &s->alt_l) = down; return true;
    default:      return false;
    }
}

int scancode_feed(struct scancode_state *s, uint8_t byte)
{
    if (byte == SC_EXTENDED) {
        s->extended = true;
        return SCANCODE_NONE;
    }
    bool ext = s->extended, down = !(byte & SC_RELEASE);
    uint8_t code = byte & (uint8_t)~SC_RELEASE;
    s->extended = false;
    if (modifier(s, code, ext, down) || !down)
        return SCANCODE_NONE;
    if (ext || code >= sizeof plain || scancode_combining(s))
        return SCANCODE_IGNORED;
    bool shift = s->shift_l || s->shift_r;
    return (unsigned char)(shift ? shifted : plain)[code];
}
