/* test_smbios.c — SMBIOS entry points and structures (firmware/smbios.h),
 * against table bytes laid out as DSP0134 and QEMU's SeaBIOS/OVMF write them. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "firmware/smbios.h"

static uint8_t tab[1024];
static size_t tlen;

static void put(const void *p, size_t n)
{
    memcpy(tab + tlen, p, n);
    tlen += n;
}

/* A structure: its formatted area (type, len, handle, then body) and strings. */
static void structure(uint8_t type, const uint8_t *body, uint8_t blen, const char *const *strs)
{
    uint8_t hdr[4] = { type, (uint8_t)(4 + blen), 0x00, type };
    put(hdr, 4);
    if (blen)
        put(body, blen);
    if (!strs || !strs[0]) {
        put("\0\0", 2);
        return;
    }
    for (; *strs; strs++)
        put(*strs, strlen(*strs) + 1);
    put("", 1);
}

static void fix_sum(uint8_t *p, size_t n, size_t at)
{
    uint8_t s = 0;
    p[at] = 0;
    for (size_t i = 0; i < n; i++)
        s = (uint8_t)(s + p[i]);
    p[at] = (uint8_t)-s;
}

static void build_table(void)
{
    tlen = 0;
    /* type 0: vendor 1, version 2, segment, date 3 */
    uint8_t bios[14] = { 1, 2, 0x00, 0xE8, 3, 0 };
    const char *bs[] = { "SeaBIOS", "1.16.3", "04/01/2014", NULL };
    structure(0, bios, sizeof bios, bs);
    /* type 1: manufacturer 1, product 2, version 3, serial 4 (never read) */
    uint8_t sys[23] = { 1, 2, 3, 4 };
    const char *ss[] = { "ACME", "Rack \"Server\" 9", "v2", "SERIAL-123", NULL };
    structure(1, sys, sizeof sys, ss);
    /* type 2: manufacturer 1, product 2, version 0 (none), serial 3 */
    uint8_t board[11] = { 1, 2, 0, 3 };
    const char *bds[] = { "ACME Boards", "X99-Pro", "BSERIAL", NULL };
    structure(2, board, sizeof board, bds);
    /* type 17 memory devices: 8192 MiB; 512 KiB units (bit 15); none; extended 32 GiB */
    uint8_t mem[0x24] = { 0 };
    mem[0x0C - 4] = 0x00;
    mem[0x0D - 4] = 0x20;                       /* 0x2000 MiB */
    structure(17, mem, sizeof mem, NULL);
    memset(mem, 0, sizeof mem);
    mem[0x0C - 4] = 0x00;
    mem[0x0D - 4] = 0x88;                       /* 0x800 KiB = 2 MiB */
    structure(17, mem, sizeof mem, NULL);
    memset(mem, 0, sizeof mem);                                      /* empty slot */
    structure(17, mem, sizeof mem, NULL);
    memset(mem, 0, sizeof mem);
    mem[0x0C - 4] = 0xFF;
    mem[0x0D - 4] = 0x7F;                       /* extended size */
    uint32_t ext = 32768;
    memcpy(mem + 0x1C - 4, &ext, 4);
    structure(17, mem, sizeof mem, NULL);
    memset(mem, 0, sizeof mem);
    mem[0x0C - 4] = 0xFF;
    mem[0x0D - 4] = 0xFF;                       /* unknown */
    structure(17, mem, sizeof mem, NULL);
    structure(127, NULL, 0, NULL);
}

static void test_table(void)
{
    struct smbios_ident id;
    build_table();
    smbios_table_parse(tab, tlen, 0, &id);
    CHECK(!strcmp(id.bios_vendor, "SeaBIOS"));
    CHECK(!strcmp(id.bios_version, "1.16.3"));
    CHECK(!strcmp(id.bios_date, "04/01/2014"));
    CHECK(!strcmp(id.sys_vendor, "ACME"));
    CHECK(!strcmp(id.sys_product, "Rack \"Server\" 9"));
    CHECK(!strcmp(id.sys_version, "v2"));
    CHECK(!strcmp(id.board_vendor, "ACME Boards"));
    CHECK(!strcmp(id.board_product, "X99-Pro"));
    CHECK(!strcmp(id.board_version, ""));          /* string 0: none */
    CHECK_EQ(id.memory_mb, 8192 + 2 + 32768);
    CHECK_EQ(id.structs, 9);
    CHECK(!id.truncated);
    const char *raw = (const char *)&id;           /* serial numbers never copied */
    for (size_t i = 0; i + 6 <= sizeof id; i++)
        CHECK(memcmp(raw + i, "SERIAL", 6) != 0);
    /* a count stops the walk; a table cut inside a structure is truncated */
    smbios_table_parse(tab, tlen, 1, &id);
    CHECK(!strcmp(id.bios_vendor, "SeaBIOS"));
    CHECK(!strcmp(id.sys_vendor, ""));
    smbios_table_parse(tab, 55, 0, &id);       /* type 0 is 45 bytes: type 1 is cut */
    CHECK(id.truncated);
    CHECK(!strcmp(id.bios_vendor, "SeaBIOS"));
    /* a structure whose length is below its header: stops, no loop */
    uint8_t bad[8] = { 1, 2, 0, 0, 0, 0, 0, 0 };
    smbios_table_parse(bad, sizeof bad, 0, &id);
    CHECK(id.truncated);
    CHECK_EQ(id.structs, 0);
    /* a string number past the strings, a non-printable byte */
    tlen = 0;
    uint8_t sys[4] = { 1, 9, 0, 0 };
    const char *odd[] = { "A\x01Z", NULL };
    structure(1, sys, sizeof sys, odd);
    smbios_table_parse(tab, tlen, 0, &id);
    CHECK(!strcmp(id.sys_vendor, "A?Z"));
    CHECK(!strcmp(id.sys_product, ""));
}

static void test_entry_points(void)
{
    struct smbios_entry e;
    const char *why = NULL;
    uint8_t ep2[0x1F] = "_SM_";
    ep2[5] = 0x1F;
    ep2[6] = 2;
    ep2[7] = 8;
    memcpy(ep2 + 0x10, "_DMI_", 5);
    ep2[0x16] = 0x34;
    ep2[0x17] = 0x01;                                   /* 0x134 bytes */
    uint32_t addr = 0x7FFE1000;
    memcpy(ep2 + 0x18, &addr, 4);
    ep2[0x1C] = 9;
    fix_sum(ep2 + 0x10, 0x0F, 5);
    fix_sum(ep2, 0x1F, 4);
    CHECK(smbios_entry_parse(ep2, sizeof ep2, &e, &why));
    CHECK_EQ(e.major, 2);
    CHECK_EQ(e.minor, 8);
    CHECK_EQ(e.table_addr, 0x7FFE1000);
    CHECK_EQ(e.table_len, 0x134);
    CHECK_EQ(e.structs, 9);
    ep2[0x1C] ^= 1;                                                        /* checksum breaks */
    CHECK(!smbios_entry_parse(ep2, sizeof ep2, &e, &why));
    ep2[0x1C] ^= 1;
    CHECK(!smbios_entry_parse(ep2, 0x10, &e, &why));                       /* cut short */
    ep2[0x11] ^= 1;                                                        /* _DMI_ damaged */
    CHECK(!smbios_entry_parse(ep2, sizeof ep2, &e, &why));

    uint8_t ep3[0x18] = "_SM3_";
    ep3[6] = 0x18;
    ep3[7] = 3;
    ep3[8] = 2;
    uint32_t max = 0x2000;
    uint64_t a3 = 0x17FFE0000ull;
    memcpy(ep3 + 0x0C, &max, 4);
    memcpy(ep3 + 0x10, &a3, 8);
    fix_sum(ep3, 0x18, 5);
    CHECK(smbios_entry_parse(ep3, sizeof ep3, &e, &why));
    CHECK_EQ(e.major, 3);
    CHECK_EQ(e.minor, 2);
    CHECK_EQ(e.table_addr, 0x17FFE0000ull);
    CHECK_EQ(e.table_len, 0x2000);
    CHECK_EQ(e.structs, 0);
    ep3[6] = 0x40;                                                         /* longer than given */
    CHECK(!smbios_entry_parse(ep3, sizeof ep3, &e, &why));

    uint8_t junk[32] = "RSD PTR ";
    why = NULL;
    CHECK(!smbios_entry_parse(junk, sizeof junk, &e, &why));
    CHECK(why && strstr(why, "anchor"));
}

int main(void)
{
    test_table();
    test_entry_points();
    return check_summary("test_smbios");
}
