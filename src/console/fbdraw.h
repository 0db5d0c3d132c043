/* fbdraw.h — drawing text cells into a direct-colour framebuffer.
 *
 * Pure code (built and tested on the host too): it only writes memory at
 * `base`, never reads it back (a framebuffer read is very slow on real
 * hardware). A pixel is bpp/8 bytes (32, 24 or 16 bpp), little-endian,
 * holding red, green and blue at the bit positions and widths GRUB gave;
 * each line is `pitch` bytes (any value, padding included). */
#ifndef CONSOLE_FBDRAW_H
#define CONSOLE_FBDRAW_H
#include <stdbool.h>
#include <stdint.h>

struct fb_surface {
    uint8_t *base;
    uint32_t pitch, width, height;
    uint8_t bpp;
    uint8_t red_pos, red_size, green_pos, green_size, blue_pos, blue_size;
};

/* True when fbdraw can draw on s; otherwise *why says what is wrong. */
bool fb_surface_ok(const struct fb_surface *s, const char **why);
/* The pixel value for an 8-bit-per-channel colour in s's format. */
uint32_t fb_pixel(const struct fb_surface *s, uint8_t r, uint8_t g, uint8_t b);
/* Draw one glyph (font.h layout) with its top-left corner at pixel (x, y),
 * each font pixel a scale x scale square (FONT_W*scale x FONT_H*scale in
 * all): set bits in fg, clear bits in bg. Clipped to s. */
void fb_glyph(const struct fb_surface *s, uint32_t x, uint32_t y, const uint8_t *glyph,
              uint32_t scale, uint32_t fg, uint32_t bg);
/* Fill the rectangle (x, y, w, h) with one pixel value. Clipped to s. */
void fb_fill(const struct fb_surface *s, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
             uint32_t pixel);

#endif
