/* test_fbdraw.c — glyphs and fills in memory at 32, 24 and 16 bpp with odd
 * pitches and unusual field layouts, checked pixel by pixel. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "console/fbdraw.h"
#include "console/font.h"

#define W      21
#define H      37
#define CANARY 0xA5

static uint8_t mem[H * 100 + 16];

static struct fb_surface surface(uint8_t bpp, uint32_t pitch, const uint8_t f[6])
{
    struct fb_surface s = { mem + 1, pitch, W, H, bpp, f[0], f[1], f[2], f[3], f[4], f[5] };
    memset(mem, CANARY, sizeof mem);
    return s;
}

static uint32_t get(const struct fb_surface *s, uint32_t x, uint32_t y)
{
    uint32_t v = 0;
    memcpy(&v, s->base + y * s->pitch + x * (s->bpp / 8), s->bpp / 8);
    return v;
}

/* Draw 'A' at (5, 9), then every pixel of its cell is fg or bg as the
 * font says, and nothing outside the cell changed. */
static void check_glyph(uint8_t bpp, uint32_t pitch, const uint8_t f[6])
{
    struct fb_surface s = surface(bpp, pitch, f);
    const char *why = NULL;
    CHECK(fb_surface_ok(&s, &why));
    uint32_t fg = fb_pixel(&s, 255, 255, 255), bg = fb_pixel(&s, 0, 0, 170);
    const uint8_t *g = font_glyph('A');
    fb_glyph(&s, 5, 9, g, 1, fg, bg);
    unsigned bad = 0, lit = 0;
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++) {
            bool in = x >= 5 && x < 5 + FONT_W && y >= 9 && y < 9 + FONT_H;
            uint32_t want = bg;
            if (in && (g[y - 9] & (0x80 >> (x - 5)))) {
                want = fg;
                lit++;
            }
            uint32_t canary = 0;
            memset(&canary, CANARY, bpp / 8);
            if (get(&s, x, y) != (in ? want : canary))
                bad++;
        }
    CHECK_EQ(bad, 0);
    CHECK(lit > 10);                             /* 'A' really has ink */
    CHECK_EQ(mem[0], CANARY);                    /* nothing before base */
}

static const uint8_t XRGB[6] = { 16, 8, 8, 8, 0, 8 };
static const uint8_t XBGR[6] = { 0, 8, 8, 8, 16, 8 };
static const uint8_t RGB565[6] = { 11, 5, 5, 6, 0, 5 };
static const uint8_t RGB555[6] = { 10, 5, 5, 5, 0, 5 };

static void test_glyphs(void)
{
    check_glyph(32, W * 4 + 3, XRGB);            /* odd pitch: unaligned pixels */
    check_glyph(32, W * 4, XBGR);
    check_glyph(24, W * 3 + 1, XRGB);
    check_glyph(24, W * 3 + 5, XBGR);
    check_glyph(16, W * 2 + 1, RGB565);
    check_glyph(16, W * 2 + 7, RGB555);
}

static void test_pixels(void)
{
    struct fb_surface s = surface(32, W * 4, XRGB);
    CHECK_EQ(fb_pixel(&s, 0x12, 0x34, 0x56), 0x123456);
    s = surface(32, W * 4, XBGR);
    CHECK_EQ(fb_pixel(&s, 0x12, 0x34, 0x56), 0x563412);
    s = surface(16, W * 2, RGB565);
    CHECK_EQ(fb_pixel(&s, 255, 255, 255), 0xFFFF);
    CHECK_EQ(fb_pixel(&s, 255, 0, 0), 0xF800);
    CHECK_EQ(fb_pixel(&s, 0, 255, 0), 0x07E0);
    s = surface(16, W * 2, RGB555);
    CHECK_EQ(fb_pixel(&s, 0, 0, 255), 0x001F);
    CHECK_EQ(fb_pixel(&s, 255, 255, 255), 0x7FFF);
}

static void test_clip_and_fill(void)
{
    struct fb_surface s = surface(24, W * 3 + 2, XRGB);
    fb_glyph(&s, W - 3, H - 4, font_glyph('#'), 1, 0xFFFFFF, 0x000001);  /* clipped */
    fb_fill(&s, 0, 0, 1000, 2, 0x0A0B0C);
    CHECK_EQ(get(&s, W - 1, 1), 0x0A0B0C);
    CHECK_EQ(get(&s, 0, 2), 0xA5A5A5);
    CHECK_EQ(mem[1 + (H - 1) * s.pitch + W * 3], CANARY);   /* padding untouched */
    CHECK(get(&s, W - 1, H - 1) == 0x000001 || get(&s, W - 1, H - 1) == 0xFFFFFF);
    CHECK_EQ(font_glyph('\x01'), font_glyph('?'));
}

/* scale 2: every font pixel is a 2x2 square of the same value. */
static void test_scaled(void)
{
    struct fb_surface s = surface(16, W * 2 + 3, RGB565);
    const uint8_t *g = font_glyph('W');
    fb_glyph(&s, 1, 2, g, 2, 0xFFFF, 0x0001);
    unsigned bad = 0;
    for (uint32_t y = 0; y < 2 * FONT_H; y++)          /* the cell fits: 2 + 32 <= H */
        for (uint32_t x = 0; x < 2 * FONT_W; x++) {      /* 1 + 16 <= W */
            bool ink = g[y / 2] & (0x80 >> (x / 2));
            if (get(&s, 1 + x, 2 + y) != (ink ? 0xFFFFu : 0x0001u))
                bad++;
        }
    CHECK_EQ(bad, 0);
    CHECK_EQ(get(&s, 0, 2), 0xA5A5);                  /* left of the cell untouched */
    fb_glyph(&s, 0, 0, g, 0, 0xFFFF, 0x0001);         /* scale 0 draws nothing */
    CHECK_EQ(get(&s, 0, 0), 0xA5A5);
}

static void test_bad_surfaces(void)
{
    const char *why = NULL;
    struct fb_surface s = surface(8, W, XRGB);
    CHECK(!fb_surface_ok(&s, &why));
    s = surface(32, W * 4 - 1, XRGB);            /* pitch too short */
    CHECK(!fb_surface_ok(&s, &why));
    s = surface(16, W * 2, XRGB);                /* red field beyond 16 bits */
    CHECK(!fb_surface_ok(&s, &why));
    CHECK(why != NULL);
}

int main(void)
{
    test_glyphs();
    test_pixels();
    test_clip_and_fill();
    test_scaled();
    test_bad_surfaces();
    return check_summary("test_fbdraw");
}
