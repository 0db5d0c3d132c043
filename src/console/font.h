/* font.h — the built-in 8x16 bitmap font for the screen console.
 *
 * One glyph per printable ASCII character (FONT_FIRST..FONT_LAST). A glyph
 * is FONT_H bytes, one per pixel row from the top; bit 7 is the leftmost
 * pixel. The data lives in font8x16.c, the only copy: the screen boot test
 * reads that file to render the text it expects to see. */
#ifndef CONSOLE_FONT_H
#define CONSOLE_FONT_H
#include <stdint.h>

#define FONT_W     8
#define FONT_H     16
#define FONT_FIRST 32
#define FONT_LAST  126

extern const uint8_t font8x16[FONT_LAST - FONT_FIRST + 1][FONT_H];

/* The glyph for c; characters outside the font draw as '?'. */
const uint8_t *font_glyph(char c);

#endif
