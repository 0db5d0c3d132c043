/* test_ncm.c — NTB16 blocks (CDC NCM 1.0): built around one frame and
 * read back, blocks with several frames and NDP16 chains, damaged ones,
 * and fuzzed ones (ASan sees any read outside the block). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "usb/class/ncm.h"

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static unsigned get16(const uint8_t *p) { return p[0] | p[1] << 8; }

static void test_params(void)
{
    uint8_t b[NCM_PARAMS_LEN] = { 0 };
    put16(b, 28);
    put16(b + 2, 0x0003);                        /* NTB16 and NTB32 */
    b[4] = 0x00, b[5] = 0x40;                    /* dwNtbInMaxSize 16384 */
    b[16] = 0x00, b[17] = 0x20;                  /* dwNtbOutMaxSize 8192 */
    put16(b + 20, 4);
    put16(b + 22, 2);
    put16(b + 24, 8);
    struct ncm_params p;
    CHECK(ncm_parse_params(b, sizeof b, &p));
    CHECK_EQ(p.in_max, 16384);
    CHECK_EQ(p.out_max, 8192);
    CHECK_EQ(p.out_divisor, 4);
    CHECK_EQ(p.out_remainder, 2);
    CHECK_EQ(p.out_align, 8);
    CHECK(!ncm_parse_params(b, 27, &p));         /* short */
    put16(b + 2, 0x0002);                        /* NTB32 only */
    CHECK(!ncm_parse_params(b, sizeof b, &p));
}

static void test_build_and_read(void)
{
    uint8_t frame[1514], ntb[2048];
    for (unsigned i = 0; i < sizeof frame; i++)
        frame[i] = (uint8_t)(i * 13 + 5);
    /* clang-format off */
    struct { uint16_t div, rem, align; } layouts[] = {
        { 4, 0, 4 }, { 4, 2, 8 }, { 0, 0, 0 }, { 16, 14, 16 }, { 512, 0, 4 },
    };
    /* clang-format on */
    for (unsigned k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
        struct ncm_params p = { .formats = 1, .out_max = 2048, .out_divisor = layouts[k].div, .out_remainder = layouts[k].rem, .out_align = layouts[k].align };
        for (unsigned len = 60; len <= 1514; len += 227) {
            unsigned n = ncm_build(ntb, sizeof ntb, (uint16_t)(k * 100 + len), &p, frame, len);
            CHECK(n > len && n <= sizeof ntb);
            CHECK_EQ(get16(ntb + 8), n);                 /* wBlockLength */
            CHECK_EQ(get16(ntb + 6), (k * 100 + len) & 0xFFFF);
            unsigned ndp = get16(ntb + 10);
            CHECK_EQ(ndp % (layouts[k].align > 4 ? layouts[k].align : 4), 0);
            unsigned dg = get16(ntb + ndp + 8);
            if (layouts[k].div)
                CHECK_EQ(dg % layouts[k].div, layouts[k].rem % layouts[k].div);
            CHECK_EQ(get16(ntb + ndp + 12), 0);          /* the (0,0) terminator */
            CHECK_EQ(get16(ntb + ndp + 14), 0);
            struct ncm_reader r;
            const uint8_t *f;
            unsigned flen;
            CHECK(ncm_open(&r, ntb, n));
            CHECK(ncm_next(&r, &f, &flen));
            CHECK_EQ(flen, len);
            CHECK(!memcmp(f, frame, len));
            CHECK(!ncm_next(&r, &f, &flen));
            CHECK_EQ(r.bad, 0);
        }
    }
    struct ncm_params small = { .formats = 1, .out_max = 1000, .out_divisor = 4 };
    CHECK_EQ(ncm_build(ntb, sizeof ntb, 0, &small, frame, 1514), 0);   /* past out_max */
    small.out_max = 0;
    CHECK_EQ(ncm_build(ntb, 1500, 0, &small, frame, 1514), 0);          /* past cap */
}

/* A block as a device builds it: two NDP16s, three frames, one bad entry. */
static unsigned multi(uint8_t *b)
{
    memset(b, 0, 1024);
    memcpy(b, "NCMH", 4);
    put16(b + 4, 12);
    put16(b + 8, 1000);
    put16(b + 10, 16);
    memcpy(b + 16, "NCM0", 4);                   /* NDP16 at 16: two frames and a bad entry */
    put16(b + 20, 24);
    put16(b + 22, 600);                          /* next NDP16 */
    put16(b + 24, 100), put16(b + 26, 60);
    put16(b + 28, 200), put16(b + 30, 900);      /* runs past the block: bad */
    put16(b + 32, 300), put16(b + 34, 64);
    memcpy(b + 600, "NCM0", 4);
    put16(b + 604, 16);
    put16(b + 608, 700), put16(b + 610, 98);
    for (unsigned i = 100; i < 160; i++) b[i] = 1;
    for (unsigned i = 300; i < 364; i++) b[i] = 2;
    for (unsigned i = 700; i < 798; i++) b[i] = 3;
    return 1000;
}

static void test_multi_and_damaged(void)
{
    uint8_t b[1024];
    struct ncm_reader r;
    const uint8_t *f;
    unsigned len, n = multi(b);
    CHECK(ncm_open(&r, b, n));
    CHECK(ncm_next(&r, &f, &len) && len == 60 && f[0] == 1);
    CHECK(ncm_next(&r, &f, &len) && len == 64 && f[0] == 2);
    CHECK(ncm_next(&r, &f, &len) && len == 98 && f[0] == 3);
    CHECK(!ncm_next(&r, &f, &len));
    CHECK_EQ(r.bad, 1);
    /* Fewer bytes arrived than wBlockLength says. */
    CHECK(!ncm_open(&r, b, 999));
    /* wBlockLength 0: the transfer's length is the block's. */
    multi(b), put16(b + 8, 0);
    CHECK(ncm_open(&r, b, n));
    CHECK_EQ(r.block, n);
    CHECK(ncm_next(&r, &f, &len) && len == 60);
    /* Wrong signatures, header length, NDP16 index. */
    multi(b), b[3] = 'X';
    CHECK(!ncm_open(&r, b, n));
    multi(b), put16(b + 4, 16);
    CHECK(!ncm_open(&r, b, n));
    multi(b), put16(b + 10, 18);                 /* not a multiple of 4 */
    CHECK(!ncm_open(&r, b, n));
    multi(b), memcpy(b + 16, "NCM1", 4);         /* CRC datagrams: not negotiated */
    CHECK(!ncm_open(&r, b, n));
    /* An NDP16 chain that loops: bounded, the frames seen once per lap. */
    multi(b), put16(b + 606, 600);
    CHECK(ncm_open(&r, b, n));
    unsigned frames = 0;
    while (ncm_next(&r, &f, &len))
        frames++;
    CHECK(frames >= 3 && frames <= 20);
    /* Fuzz: random bytes changed in a valid block; whatever comes out lies
     * inside the block and is at least a header long. */
    srand(18);
    for (unsigned t = 0; t < 20000; t++) {
        n = multi(b);
        for (unsigned k = 0, m = 1 + rand() % 6; k < m; k++)
            b[rand() % 64 < 48 ? (unsigned)rand() % 40 : (unsigned)rand() % n] = (uint8_t)rand();
        if (!ncm_open(&r, b, n))
            continue;
        for (unsigned guard = 0; ncm_next(&r, &f, &len) && guard < 1000; guard++) {
            CHECK(f >= b + 12 && f + len <= b + n && len >= 14);
        }
    }
}

int main(void)
{
    test_params();
    test_build_and_read();
    test_multi_and_damaged();
    return check_summary("ncm");
}
