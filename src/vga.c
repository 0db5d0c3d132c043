/* vga.c — a scrolling EGA text console (light grey on black). */
#include "vga.h"
#include "kstring.h"

#define ATTR_GREY 0x0700

static volatile uint16_t *screen;
static uint32_t cols, rows, x, y;

void vga_init(uint64_t addr, uint32_t c, uint32_t r)
{
    if (!addr || c == 0 || r == 0 || c > 256 || r > 256)
        return;
    screen = (volatile uint16_t *)addr;
    cols = c;
    rows = r;
    x = y = 0;
    for (uint32_t i = 0; i < cols * rows; i++)
        screen[i] = ATTR_GREY | ' ';
}

static void newline(void)
{
    x = 0;
    if (++y < rows)
        return;
    for (uint32_t i = 0; i < cols * (rows - 1); i++)
        screen[i] = screen[i + cols];
    for (uint32_t i = 0; i < cols; i++)
        screen[cols * (rows - 1) + i] = ATTR_GREY | ' ';
    y = rows - 1;
}

void vga_write(const char *s, unsigned long n)
{
    if (!screen)
        return;
    for (unsigned long i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\n') {
            newline();
        } else if (c == '\r') {
            x = 0;
        } else if (c >= ' ' && c < 127) {
            screen[y * cols + x] = ATTR_GREY | (uint8_t)c;
            if (++x == cols)
                newline();
        }
    }
}
