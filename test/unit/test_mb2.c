/* test_mb2.c — multiboot2 tag walking. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "firmware/mb2.h"

static uint8_t info[4096] __attribute__((aligned(8)));
static uint32_t off;

static void begin(void)
{
    memset(info, 0, sizeof info);
    off = 8;
}

static void tag(uint32_t type, const void *body, uint32_t n)
{
    uint32_t size = 8 + n;
    memcpy(info + off, &type, 4);
    memcpy(info + off + 4, &size, 4);
    if (n)
        memcpy(info + off + 8, body, n);
    off += (size + 7) & ~7u;
}

static void end(void)
{
    tag(0, NULL, 0);
    memcpy(info, &off, 4);
}

static void test_tags(void)
{
    struct mb2_info mb;
    const char *why;
    begin();
    tag(1, "maxcpus=4 nosmp", 16);
    tag(2, "GRUB 2.06", 10);
    tag(77, "unknown tag body", 16);                     /* skipped */
    uint8_t mmap[8 + 2 * 24] = { 0 };
    uint32_t esz = 24, ever = 0;
    memcpy(mmap, &esz, 4);
    memcpy(mmap + 4, &ever, 4);
    uint64_t b0 = 0, l0 = 0x9F000, b1 = 0x100000, l1 = 0x1F00000;
    uint32_t avail = 1, reserved = 2;
    memcpy(mmap + 8, &b0, 8);
    memcpy(mmap + 16, &l0, 8);
    memcpy(mmap + 24, &avail, 4);
    memcpy(mmap + 32, &b1, 8);
    memcpy(mmap + 40, &l1, 8);
    memcpy(mmap + 48, &reserved, 4);
    tag(6, mmap, sizeof mmap);
    uint8_t rsdp_old[20] = "RSD PTR old";
    uint8_t rsdp_new[36] = "RSD PTR new";
    tag(15, rsdp_new, 36);
    tag(14, rsdp_old, 20);                               /* after 15: must not win */
    tag(12, "\1\2\3\4\5\6\7\10", 8);                     /* EFI64 system table */
    end();
    CHECK(mb2_parse(info, sizeof info, &mb, &why));
    CHECK(!strcmp(mb.cmdline, "maxcpus=4 nosmp"));
    CHECK(!strcmp(mb.loader, "GRUB 2.06"));
    CHECK_EQ(mb.mmap_count, 2);
    CHECK_EQ(mb.mmap[1].base, 0x100000);
    CHECK_EQ(mb.mmap[1].type, 2);
    CHECK(mb.rsdp_is_v2);
    CHECK(!memcmp(mb.rsdp, "RSD PTR new", 11));
    CHECK(mb.efi);
    CHECK_EQ(mb.efi_system_table, 0x0807060504030201ull);
    CHECK(!mb.network);
    CHECK_EQ(mb.smbios_len, 0);
    CHECK(!strcmp(mb.module_string, ""));
}

/* Issue 30: the module string (GRUB's $root), the SMBIOS and network tags. */
static void test_identity_tags(void)
{
    struct mb2_info mb;
    const char *why;
    begin();
    uint8_t mod[8 + 16] = { 0 };                         /* mod_start, mod_end, string */
    memcpy(mod + 8, "root=hd96", 10);
    tag(3, mod, sizeof mod);
    uint8_t mod2[8 + 16] = { 0 };
    memcpy(mod2 + 8, "second", 7);
    tag(3, mod2, sizeof mod2);                           /* the first module's string wins */
    uint8_t smb[8 + 0x1F] = { 2, 8 };                    /* major, minor, reserved, entry */
    memcpy(smb + 8, "_SM_", 4);
    tag(13, smb, sizeof smb);
    tag(16, "\2\1\6", 3);                             /* a DHCP ACK's first bytes */
    tag(11, "\x10\x20\x30\x40", 4);                  /* EFI32 system table */
    end();
    CHECK(mb2_parse(info, sizeof info, &mb, &why));
    CHECK(!strcmp(mb.module_string, "root=hd96"));
    CHECK_EQ(mb.smbios_len, 0x1F);
    CHECK(!memcmp(mb.smbios, "_SM_", 4));
    CHECK(mb.network);
    CHECK(mb.efi);
    CHECK_EQ(mb.efi_system_table, 0x40302010u);
}

static void test_bad(void)
{
    struct mb2_info mb;
    const char *why = NULL;
    begin();
    tag(1, "x", 2);
    memcpy(info, &off, 4);                               /* no end tag */
    CHECK(!mb2_parse(info, sizeof info, &mb, &why));
    CHECK(why != NULL);
    begin();
    uint32_t type = 1, size = 4000;                      /* overruns the total */
    memcpy(info + 8, &type, 4);
    memcpy(info + 12, &size, 4);
    off = 64;
    memcpy(info, &off, 4);
    CHECK(!mb2_parse(info, sizeof info, &mb, &why));
    begin();
    size = 4;                                            /* too small: would loop */
    memcpy(info + 8, &type, 4);
    memcpy(info + 12, &size, 4);
    memcpy(info, &off, 4);
    CHECK(!mb2_parse(info, sizeof info, &mb, &why));
    CHECK(!mb2_parse(info + 4, sizeof info, &mb, &why)); /* misaligned */
    CHECK(!mb2_parse(NULL, sizeof info, &mb, &why));
}

static void test_long_cmdline(void)
{
    struct mb2_info mb;
    const char *why;
    char line[700];
    memset(line, 'a', sizeof line - 1);
    line[sizeof line - 1] = 0;
    begin();
    tag(1, line, sizeof line);
    end();
    CHECK(mb2_parse(info, sizeof info, &mb, &why));
    CHECK(mb.cmdline_truncated);
    CHECK_EQ(strlen(mb.cmdline), MB2_CMDLINE_MAX - 1);
}

/* Tag 8 body (after type and size) as GRUB lays it out. */
static uint32_t fb_body(uint8_t *b, uint64_t addr, uint32_t pitch, uint32_t w, uint32_t h,
                        uint8_t bpp, uint8_t type)
{
    memset(b, 0, 40);
    memcpy(b, &addr, 8);
    memcpy(b + 8, &pitch, 4);
    memcpy(b + 12, &w, 4);
    memcpy(b + 16, &h, 4);
    b[20] = bpp;
    b[21] = type;
    return 24;                                           /* + colour info */
}

static void test_framebuffer_rgb(void)
{
    struct mb2_info mb;
    const char *why;
    uint8_t b[40];
    uint32_t n = fb_body(b, 0x4000000000ull, 5124, 1280, 1024, 32, 1);
    const uint8_t rgb[6] = { 16, 8, 8, 8, 0, 8 };        /* x8r8g8b8 */
    memcpy(b + n, rgb, 6);
    begin();
    tag(8, b, n + 6);
    end();
    CHECK(mb2_parse(info, sizeof info, &mb, &why));
    CHECK(mb.fb.present);
    CHECK_EQ(mb.fb.type, MB2_FB_RGB);
    CHECK_EQ(mb.fb.addr, 0x4000000000ull);               /* above 4 GiB kept whole */
    CHECK_EQ(mb.fb.pitch, 5124);
    CHECK_EQ(mb.fb.width, 1280);
    CHECK_EQ(mb.fb.height, 1024);
    CHECK_EQ(mb.fb.bpp, 32);
    CHECK_EQ(mb.fb.red_pos, 16);
    CHECK_EQ(mb.fb.green_pos, 8);
    CHECK_EQ(mb.fb.blue_pos, 0);
    CHECK_EQ(mb.fb.red_size + mb.fb.green_size + mb.fb.blue_size, 24);

    const uint8_t rgb565[6] = { 11, 5, 5, 6, 0, 5 };
    n = fb_body(b, 0xE0000000u, 1600, 800, 600, 16, 1);
    memcpy(b + n, rgb565, 6);
    begin();
    tag(8, b, n + 6);
    end();
    CHECK(mb2_parse(info, sizeof info, &mb, &why));
    CHECK_EQ(mb.fb.bpp, 16);
    CHECK_EQ(mb.fb.red_pos, 11);
    CHECK_EQ(mb.fb.green_size, 6);

    begin();                                             /* RGB without its field layout */
    tag(8, b, n);
    end();
    CHECK(mb2_parse(info, sizeof info, &mb, &why));
    CHECK(!mb.fb.present);
}

static void test_framebuffer_text(void)
{
    struct mb2_info mb;
    const char *why;
    uint8_t b[40];
    uint32_t n = fb_body(b, 0xB8000, 160, 80, 25, 16, 2);
    begin();
    tag(8, b, n);
    end();
    CHECK(mb2_parse(info, sizeof info, &mb, &why));
    CHECK(mb.fb.present);
    CHECK_EQ(mb.fb.type, MB2_FB_EGA_TEXT);
    CHECK_EQ(mb.fb.width, 80);
    CHECK_EQ(mb.fb.height, 25);
    CHECK_EQ(mb.fb.pitch, 160);
    begin();                                             /* truncated tag: ignored */
    tag(8, b, 16);
    end();
    CHECK(mb2_parse(info, sizeof info, &mb, &why));
    CHECK(!mb.fb.present);
}

int main(void)
{
    test_framebuffer_rgb();
    test_framebuffer_text();
    test_tags();
    test_identity_tags();
    test_bad();
    test_long_cmdline();
    return check_summary("test_mb2");
}
