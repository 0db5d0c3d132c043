/* screen.c — text buffer, cell-by-cell redraw, framebuffer and EGA text.
 * Where drawing happens and why: see screen.h. */
#include "console/screen.h"
#include "arch/cpu.h"
#include "arch/pat.h"
#include "arch/spinlock.h"
#include "console/fbdraw.h"
#include "console/font.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "mm/mmio.h"
#include "time/tsc.h"

#define MAX_COLS          256              /* wider displays keep a blank margin */
#define BIG_WIDTH         2560             /* from here on, glyphs are drawn twice as big */
#define BIG_HEIGHT        1440
#define MAX_ROWS          160
#define LOG_LINES         MAX_ROWS         /* lines kept: at least a screenful */
#define EGA_GREY          0x07             /* EGA attribute: light grey on black */
#define EGA_STATUS        0x1F             /* white on blue */
#define NOT_DRAWN         0                /* never a printable character */
#define CRTC_INDEX        0x3D4            /* VGA CRT controller (colour text) */
#define CRTC_DATA         0x3D5
#define CRTC_CURSOR_START 0x0A      /* Cursor Start Register */
#define CURSOR_DISABLE    0x20      /* its bit 5: Cursor Disable */

enum backend { NONE,
               FRAMEBUFFER,
               EGA_TEXT };

static enum backend backend;
static struct mb2_framebuffer fbinfo;
static struct fb_surface fb;
static volatile uint16_t *ega;
static uint32_t ega_pitch;          /* cells per EGA line */
static uint32_t cols, rows;         /* the cell grid */
static uint32_t scale = 1;          /* screen pixels per font pixel */
static uint32_t px_text_fg, px_text_bg, px_status_fg, px_status_bg;

/* The text buffer: line n of the console output is log[n % LOG_LINES].
 * Written only under the console lock (screen_write); read by the drawer
 * without a lock: a line caught mid-write is drawn right at the next poll. */
static char log[LOG_LINES][MAX_COLS];
static volatile uint64_t log_line;  /* lines started so far (the current one) */
static uint32_t log_x;

static char status_rows[SCREEN_STATUS_ROWS][MAX_COLS];  /* pushed by status.c */
static char want[MAX_ROWS][MAX_COLS];   /* drawer only */
static char drawn[MAX_ROWS][MAX_COLS];  /* what the glass shows */
static struct spinlock draw_lock;
static volatile bool live;          /* past boot: draw only when polled */
static uint64_t last_draw;
static uint64_t redraw_ticks;      /* one full redraw, the first after boot */
static uint64_t wc_ticks;          /* the same once write-combining (0: not) */

static void map_framebuffer(void);
static void draw_changes(void);
static void assume_blank(void);

static bool init_ega(const struct mb2_framebuffer *f)
{
    if (!f->addr || f->width < 20 || f->height < SCREEN_STATUS_ROWS + 2)
        return false;
    ega = (volatile uint16_t *)(uintptr_t)f->addr;
    ega_pitch = f->pitch >= 2 * f->width ? f->pitch / 2 : f->width;
    cols = f->width;
    rows = f->height;
    outb(CRTC_INDEX, CRTC_CURSOR_START);    /* no blinking cursor on the status row */
    outb(CRTC_DATA, CURSOR_DISABLE);
    return true;
}

static bool init_fb(const struct mb2_framebuffer *f)
{
    fb = (struct fb_surface){ (uint8_t *)(uintptr_t)f->addr, f->pitch, f->width, f->height,
                              f->bpp, f->red_pos, f->red_size, f->green_pos, f->green_size,
                              f->blue_pos, f->blue_size };
    const char *why;
    if (!fb_surface_ok(&fb, &why)) {
        kprintf("screen: %ux%u %u bpp framebuffer: %s; no screen console\n", f->width, f->height,
                f->bpp, why);
        return false;
    }
    scale = f->width >= BIG_WIDTH && f->height >= BIG_HEIGHT ? 2 : 1;
    cols = f->width / (FONT_W * scale);
    rows = f->height / (FONT_H * scale);
    px_text_fg = fb_pixel(&fb, 0xAA, 0xAA, 0xAA);
    px_text_bg = fb_pixel(&fb, 0, 0, 0);
    px_status_fg = fb_pixel(&fb, 0xFF, 0xFF, 0xFF);
    px_status_bg = fb_pixel(&fb, 0, 0, 0xAA);
    fb.base = NULL;                 /* until mapped */
    return rows > SCREEN_STATUS_ROWS + 1 && cols >= 20;
}

bool screen_init(const struct mb2_framebuffer *f)
{
    fbinfo = *f;
    if (!f->present)
        return false;
    bool ok = false;
    if (f->type == MB2_FB_EGA_TEXT)
        ok = init_ega(f);
    else if (f->type == MB2_FB_RGB)
        ok = init_fb(f);
    /* else indexed colour: said by screen_report_adapter, once PCI is known */
    if (!ok)
        return false;
    cols = cols > MAX_COLS ? MAX_COLS : cols;
    rows = rows > MAX_ROWS ? MAX_ROWS : rows;
    backend = f->type == MB2_FB_EGA_TEXT ? EGA_TEXT : FRAMEBUFFER;
    memset(log, ' ', sizeof log);
    memset(status_rows, ' ', sizeof status_rows);
    map_framebuffer();
    assume_blank();
    spin_lock(&draw_lock);
    draw_changes();                 /* the status rows, and text as it comes */
    spin_unlock(&draw_lock);
    return true;
}

void screen_check_mode(uint32_t width, uint32_t height)
{
    if (fbinfo.present && fbinfo.width == width && fbinfo.height == height)
        kprintf("screen: %ux%u as asked (screen.mode=)\n", width, height);
    else if (fbinfo.present)
        kprintf("screen: screen.mode=%ux%u asked, GRUB gave %ux%u%s: the firmware has no such "
                "mode, or the menu entry did not pass it to GRUB (grub.cfg: bt_boot)\n",
                width,
                height, fbinfo.width, fbinfo.height,
                fbinfo.type == MB2_FB_EGA_TEXT ? " text cells" : "");
    else
        kprintf("screen: screen.mode=%ux%u asked, but GRUB handed over no screen\n", width,
                height);
}

void screen_report_adapter(bool display_adapter)
{
    bool indexed = fbinfo.present && fbinfo.type == MB2_FB_INDEXED;
    if (!display_adapter && (indexed || !fbinfo.present))
        kprintf("screen: no display (no display adapter on PCI%s); no screen console\n",
                indexed ? ", though GRUB described one" : "");
    else if (indexed)
        kprintf("screen: indexed-colour framebuffer %ux%u %u bpp at 0x%lx; no screen console\n",
                fbinfo.width, fbinfo.height, fbinfo.bpp, fbinfo.addr);
}

/* Until the first full redraw after boot, draw only what is not blank: a
 * mode set leaves a framebuffer black, and drawing every cell at boot
 * would cost the boot time (a full redraw is tens of ms on slow memory).
 * EGA text keeps GRUB's text, and is cheap: redraw it all. */
static void assume_blank(void)
{
    memset(drawn, backend == EGA_TEXT ? NOT_DRAWN : ' ', sizeof drawn);
    memset(drawn, NOT_DRAWN, sizeof drawn[0] * SCREEN_STATUS_ROWS);
}

/* Below 4 GiB the boot tables already map it; above, the page tables come
 * from the allocator, which exists only after mem_init(). */
static void map_framebuffer(void)
{
    if (backend != FRAMEBUFFER || fb.base)
        return;
    uint64_t size = (uint64_t)fbinfo.pitch * fbinfo.height;
    fb.base = mmio_map(fbinfo.addr, size, MMIO_CACHED);
}

static void newline(void)
{
    uint64_t next = log_line + 1;
    memset(log[next % LOG_LINES], ' ', cols);
    log_line = next;                /* after the clear: the drawer sees a blank line */
    log_x = 0;
}

void screen_write(const char *s, unsigned long n)
{
    if (backend == NONE)
        return;
    for (unsigned long i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\n') {
            newline();
        } else if (c == '\r') {
            log_x = 0;
        } else if (c == '\b') {
            log_x -= log_x > 0;
        } else if (c >= ' ' && c < 127) {
            if (log_x == cols)
                newline();
            log[log_line % LOG_LINES][log_x++] = c;
        }
    }
    if (!live && spin_trylock(&draw_lock)) {
        draw_changes();             /* boot: draw now (see screen.h) */
        spin_unlock(&draw_lock);
    }
}

/* ---- drawing (draw_lock held) -------------------------------------------- */

void screen_set_status(unsigned row, const char *text)
{
    if (backend == NONE || row >= SCREEN_STATUS_ROWS)
        return;
    unsigned i = 0;
    for (; i < cols && text[i]; i++)
        status_rows[row][i] = text[i];
    memset(status_rows[row] + i, ' ', cols - i);
}

static void compose(void)
{
    memcpy(want, status_rows, sizeof status_rows);
    uint32_t text_rows = rows - SCREEN_STATUS_ROWS;
    uint64_t last = log_line;
    uint64_t first = last + 1 >= text_rows ? last + 1 - text_rows : 0;
    for (uint32_t r = 0; r < text_rows; r++) {
        char *dst = want[SCREEN_STATUS_ROWS + r];
        if (first + r <= last)
            memcpy(dst, log[(first + r) % LOG_LINES], cols);
        else
            memset(dst, ' ', cols);
    }
}

static void draw_cell(uint32_t col, uint32_t row, char c)
{
    bool status = row < SCREEN_STATUS_ROWS;
    if (backend == EGA_TEXT) {
        uint16_t attr = status ? EGA_STATUS : EGA_GREY;
        ega[row * ega_pitch + col] = (uint16_t)(attr << 8 | (uint8_t)c);
        return;
    }
    fb_glyph(&fb, col * FONT_W * scale, row * FONT_H * scale, font_glyph(c), scale,
             status ? px_status_fg : px_text_fg, status ? px_status_bg : px_text_bg);
}

static void draw_changes(void)
{
    if (backend == FRAMEBUFFER && !fb.base)
        return;
    compose();
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++)
            if (drawn[r][c] != want[r][c]) {
                draw_cell(c, r, want[r][c]);
                drawn[r][c] = want[r][c];
            }
}

/* The first draw after boot redraws every cell, timed: its cost is
 * reported by screen_poll() (not here: this may run inside a dump). */
static void first_draw(void)
{
    map_framebuffer();
    if (backend == FRAMEBUFFER && !fb.base)
        return;
    memset(drawn, NOT_DRAWN, sizeof drawn);
    uint64_t t0 = rdtsc();
    draw_changes();
    redraw_ticks = rdtsc() - t0;
    /* Then write combining (arch/pat.h), measured the same way: the boot
     * tables map the top GiB uncached, where most framebuffers are. Only
     * this CPU has drawn, so no other holds the old translation. */
    uint64_t size = (uint64_t)fbinfo.pitch * fbinfo.height;
    if (backend == FRAMEBUFFER && pat_wc() && mmio_map(fbinfo.addr, size, MMIO_WC)) {
        memset(drawn, NOT_DRAWN, sizeof drawn);
        t0 = rdtsc();
        draw_changes();
        wc_ticks = rdtsc() - t0;
    }
    if (backend == FRAMEBUFFER) {   /* the margins beyond the cell grid, once */
        fb_fill(&fb, cols * FONT_W * scale, 0, fb.width, fb.height, px_text_bg);
        fb_fill(&fb, 0, rows * FONT_H * scale, fb.width, fb.height, px_text_bg);
    }
}

static void report(void)
{
    uint64_t t = redraw_ticks;
    if (backend == FRAMEBUFFER && !fb.base) {
        kprintf("screen: cannot map the framebuffer at 0x%lx; no screen console\n", fbinfo.addr);
        backend = NONE;
    } else if (backend == EGA_TEXT) {
        kprintf("screen: EGA text %ux%u; full redraw %lu TSC ticks (%lu us)\n", cols, rows, t,
                tsc_to_us(t));
    } else if (!wc_ticks) {
        kprintf("screen: %ux%u %u bpp at 0x%lx, %ux%u cells; full redraw %lu TSC ticks (%lu us)\n",
                fbinfo.width, fbinfo.height, fbinfo.bpp, fbinfo.addr, cols, rows, t, tsc_to_us(t));
    } else {
        kprintf("screen: %ux%u %u bpp at 0x%lx, %ux%u cells; full redraw %lu TSC ticks (%lu us), "
                "write-combining %lu TSC ticks (%lu us)\n",
                fbinfo.width, fbinfo.height,
                fbinfo.bpp, fbinfo.addr, cols, rows, t, tsc_to_us(t), wc_ticks,
                tsc_to_us(wc_ticks));
    }
}

/* Redraw what changed now, due or not, unless another CPU is drawing. */
static void draw_now(void)
{
    uint64_t now = rdtsc();
    if (backend == NONE || !spin_trylock(&draw_lock))
        return;                     /* another CPU draws: it will show this too */
    bool first = !live;
    live = true;
    last_draw = now;
    if (first)
        first_draw();
    else
        draw_changes();
    spin_unlock(&draw_lock);
}

bool screen_due(void)
{
    return backend != NONE && (!live || rdtsc() - last_draw >= tsc_hz() / SCREEN_HZ);
}

void screen_refresh(void)
{
    if (screen_due())
        draw_now();
}

void screen_flush(void)
{
    draw_now();
}

void screen_poll(void)
{
    static bool reported;
    screen_refresh();
    if (live && !reported && backend != NONE) {
        reported = true;
        report();
    }
}
