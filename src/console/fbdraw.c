/* fbdraw.c — glyphs and rectangles at 32, 24 and 16 bits per pixel. */
#include "console/fbdraw.h"
#include "console/font.h"

#define FB_MAX_DIM 16384            /* no display is wider or taller */

static bool field_ok(uint8_t pos, uint8_t size, uint8_t bpp)
{
    return size >= 1 && size <= 8 && pos + size <= bpp;
}

bool fb_surface_ok(const struct fb_surface *s, const char **why)
{
    if (s->bpp != 32 && s->bpp != 24 && s->bpp != 16) {
        *why = "unsupported bits per pixel (want 32, 24 or 16)";
        return false;
    }
    if (!s->base || !s->width || !s->height || s->width > FB_MAX_DIM || s->height > FB_MAX_DIM) {
        *why = "implausible framebuffer address or size";
        return false;
    }
    if (s->pitch < s->width * (s->bpp / 8u)) {
        *why = "pitch shorter than a line of pixels";
        return false;
    }
    if (!field_ok(s->red_pos, s->red_size, s->bpp) ||
        !field_ok(s->green_pos, s->green_size, s->bpp) ||
        !field_ok(s->blue_pos, s->blue_size, s->bpp)) {
        *why = "colour fields outside the pixel";
        return false;
    }
    return true;
}

/* The top `size` bits of an 8-bit channel, at bit `pos`. */
static uint32_t channel(uint8_t v, uint8_t pos, uint8_t size)
{
    return (uint32_t)(v >> (8 - size)) << pos;
}

uint32_t fb_pixel(const struct fb_surface *s, uint8_t r, uint8_t g, uint8_t b)
{
    return channel(r, s->red_pos, s->red_size) | channel(g, s->green_pos, s->green_size) |
           channel(b, s->blue_pos, s->blue_size);
}

/* One pixel, little-endian; any alignment (an odd pitch misaligns lines). */
static void put(uint8_t *p, uint8_t bpp, uint32_t v)
{
    uint16_t v16 = (uint16_t)v;
    switch (bpp) {
    case 32:
        __builtin_memcpy(p, &v, 4);
        break;
    case 24:
        __builtin_memcpy(p, &v, 3);
        break;
    default:
        __builtin_memcpy(p, &v16, 2);
        break;
    }
}

/* Clip (x, y, w, h) to s; false when nothing is left. */
static bool clip(const struct fb_surface *s, uint32_t x, uint32_t y, uint32_t *w, uint32_t *h)
{
    if (x >= s->width || y >= s->height)
        return false;
    if (*w > s->width - x)
        *w = s->width - x;
    if (*h > s->height - y)
        *h = s->height - y;
    return *w && *h;
}

void fb_glyph(const struct fb_surface *s, uint32_t x, uint32_t y, const uint8_t *glyph,
              uint32_t scale, uint32_t fg, uint32_t bg)
{
    uint32_t w = FONT_W * scale, h = FONT_H * scale, bytes = s->bpp / 8u;
    if (!scale || !clip(s, x, y, &w, &h))
        return;
    uint8_t *line = s->base + (uint64_t)y * s->pitch + (uint64_t)x * bytes;
    for (uint32_t row = 0; row < h; row++, line += s->pitch) {
        uint8_t bits = glyph[row / scale];
        for (uint32_t col = 0; col < w; col++)
            put(line + col * bytes, s->bpp, bits & (0x80u >> (col / scale)) ? fg : bg);
    }
}

void fb_fill(const struct fb_surface *s, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
             uint32_t pixel)
{
    uint32_t bytes = s->bpp / 8u;
    if (!clip(s, x, y, &w, &h))
        return;
    uint8_t *line = s->base + (uint64_t)y * s->pitch + (uint64_t)x * bytes;
    for (uint32_t row = 0; row < h; row++, line += s->pitch)
        for (uint32_t col = 0; col < w; col++)
            put(line + col * bytes, s->bpp, pixel);
}
