/* test_ohci_ed.c — OHCI EDs and general TDs of control, bulk and
 * interrupt transfers and the outcome of a queue, checked bit by bit
 * against OpenHCI 1.0a §4.2-4.3 (the numbers below are the
 * specification's, not the header's macros). */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "usb/hc/ohci/ohci_ed.h"

#define SETUP 0x00200000u
#define BUF   0x00300000u

static struct ohci_td pool[8];
static struct ohci_td *td[8];

static uint32_t phys(const void *p) { return (uint32_t)(uintptr_t)p; }

/* The controller retired td[i]: condition code, and CBP 0 (all moved)
 * or where it stopped. */
static void retire(unsigned i, uint8_t cc, uint32_t cbp)
{
    td[i]->flags = (td[i]->flags & 0x0FFFFFFFu) | (uint32_t)cc << 28;
    td[i]->cbp = cbp;
}

static void test_ed_flags(void)
{
    struct usb_pipe p = { .addr = 0x45, .endpoint = 3, .low_speed = true, .mps = 8 };
    uint32_t f = ohci_ed_flags(&p, ED_DIR_IN);
    CHECK_EQ(f & 0x7F, 0x45);                      /* FA 6:0 */
    CHECK_EQ((f >> 7) & 0xF, 3);                   /* EN 10:7 */
    CHECK_EQ((f >> 11) & 3, 2);                    /* D: IN */
    CHECK(f & (1u << 13));                         /* S: low speed */
    CHECK(!(f & (1u << 14)));                      /* not skipped */
    CHECK(!(f & (1u << 15)));                      /* general TDs */
    CHECK_EQ((f >> 16) & 0x7FF, 8);                /* MPS 26:16 */
    p.low_speed = false;
    p.mps = 64;
    f = ohci_ed_flags(&p, ED_DIR_TD);
    CHECK_EQ((f >> 11) & 3, 0);                    /* D: from the TD (control) */
    CHECK(!(f & (1u << 13)));
    CHECK_EQ((f >> 16) & 0x7FF, 64);
}

static void test_control_in(void)
{
    memset(pool, 0xAA, sizeof pool);
    unsigned n = ohci_control_tds(td, 8, SETUP, true, BUF, 18);
    CHECK_EQ(n, 3);
    /* SETUP: DP 00, T 10 (DATA0 from the TD), DI 7, CC NotAccessed. */
    CHECK_EQ((td[0]->flags >> 19) & 3, 0);
    CHECK_EQ((td[0]->flags >> 24) & 3, 2);
    CHECK_EQ((td[0]->flags >> 21) & 7, 7);
    CHECK_EQ(td[0]->flags >> 28, 0xF);
    CHECK_EQ(td[0]->cbp, SETUP);
    CHECK_EQ(td[0]->be, SETUP + 7);                /* BufferEnd: the last byte */
    CHECK_EQ(td[0]->next, phys(td[1]));
    /* Data: IN (DP 10), DATA1 (T 11), buffer rounding. */
    CHECK_EQ((td[1]->flags >> 19) & 3, 2);
    CHECK_EQ((td[1]->flags >> 24) & 3, 3);
    CHECK(td[1]->flags & (1u << 18));
    CHECK_EQ(td[1]->cbp, BUF);
    CHECK_EQ(td[1]->be, BUF + 17);
    /* Status: OUT (DP 01), DATA1, no buffer. */
    CHECK_EQ((td[2]->flags >> 19) & 3, 1);
    CHECK_EQ((td[2]->flags >> 24) & 3, 3);
    CHECK_EQ(td[2]->cbp, 0);
    CHECK_EQ(td[2]->next, phys(td[3]));            /* the new tail */
    CHECK_EQ(td[3]->flags, 0);                     /* cleared */
    CHECK_EQ(td[3]->next, 0);
    CHECK_EQ(ohci_control_tds(td, 3, SETUP, true, BUF, 18), 0);   /* no room for the tail */
    CHECK_EQ(ohci_control_tds(td, 8, SETUP, true, BUF, 4097), 0); /* one data TD at most */
}

static void test_control_no_data(void)
{
    CHECK_EQ(ohci_control_tds(td, 8, SETUP, false, 0, 0), 2);
    CHECK_EQ((td[1]->flags >> 19) & 3, 2);         /* status: IN */
    CHECK_EQ(td[1]->next, phys(td[2]));
    CHECK_EQ(ohci_control_tds(td, 8, SETUP, false, BUF, 2), 3);
    CHECK_EQ((td[1]->flags >> 19) & 3, 1);         /* data OUT */
    CHECK(!(td[1]->flags & (1u << 18)));
    CHECK_EQ((td[2]->flags >> 19) & 3, 2);         /* status IN */
}

static void test_bulk_pages(void)
{
    /* 20000 bytes from 0x300100: the first TD ends at the second page's
     * end, in whole 64-byte packets (8192 - 256 = 7936 = 124 x 64). */
    unsigned n = ohci_data_tds(td, 8, 64, true, BUF + 0x100, 20000);
    CHECK_EQ(n, 3);
    CHECK_EQ(td[0]->cbp, BUF + 0x100);
    CHECK_EQ(td[0]->be, BUF + 0x1FFF);
    CHECK_EQ(td[1]->cbp, BUF + 0x2000);
    CHECK_EQ(td[1]->be, BUF + 0x3FFF);
    CHECK_EQ(td[2]->be, BUF + 0x100 + 20000 - 1);
    for (unsigned i = 0; i < 3; i++) {
        CHECK_EQ((td[i]->flags >> 19) & 3, 2);
        CHECK_EQ((td[i]->flags >> 24) & 3, 0);     /* toggle from the ED's carry */
        CHECK_EQ(!!(td[i]->flags & (1u << 18)), i == 2);   /* rounding on the last only */
    }
    /* An unaligned start: the page split is cut back to whole packets. */
    n = ohci_data_tds(td, 8, 64, false, BUF + 0x10, 9000);
    CHECK_EQ(n, 2);
    CHECK_EQ(td[0]->be - td[0]->cbp + 1, 8128);    /* 8176 rounded down to 127 x 64 */
    CHECK_EQ(ohci_data_tds(td, 3, 64, true, BUF + 0x100, 20000), 0);
    CHECK_EQ(ohci_data_tds(td, 8, 8, true, BUF, 0), 1);         /* zero-length packet */
    CHECK_EQ(td[0]->cbp, 0);
}

static void test_outcomes(void)
{
    unsigned n = ohci_control_tds(td, 8, SETUP, true, BUF, 18);
    struct ohci_outcome o = ohci_tds_outcome(td, n, phys(td[0]));
    CHECK_EQ(o.result, OHCI_ACTIVE);
    retire(0, 0, 0);
    o = ohci_tds_outcome(td, n, phys(td[1]) | 2);  /* toggle carry does not matter */
    CHECK_EQ(o.result, OHCI_ACTIVE);
    CHECK_EQ(o.actual, 0);                         /* SETUP not counted */
    retire(1, 0, BUF + 12);                        /* rounding: 12 of 18, no error */
    retire(2, 0, 0);
    o = ohci_tds_outcome(td, n, phys(td[3]));
    CHECK_EQ(o.result, OHCI_DONE);
    CHECK_EQ(o.actual, 12);
    /* STALL in the data stage: the ED halts (H) with HeadP past it. */
    n = ohci_control_tds(td, 8, SETUP, true, BUF, 18);
    retire(0, 0, 0);
    retire(1, 4, BUF);
    o = ohci_tds_outcome(td, n, phys(td[2]) | 1);
    CHECK_EQ(o.result, OHCI_STALL);
    CHECK_EQ(o.at, 1);
    CHECK(!strcmp(ohci_cc_name(o.cc), "stall"));
    retire(1, 5, BUF);
    o = ohci_tds_outcome(td, n, phys(td[2]) | 1);
    CHECK_EQ(o.result, OHCI_FAILED);
    CHECK(!strcmp(ohci_cc_name(o.cc), "device not responding"));
    /* Bulk IN ended short in its first TD: data underrun, halted. */
    n = ohci_data_tds(td, 8, 64, true, BUF, 10000);
    CHECK_EQ(n, 2);
    retire(0, 9, BUF + 640);
    o = ohci_tds_outcome(td, n, phys(td[1]) | 1);
    CHECK_EQ(o.result, OHCI_SHORT);
    CHECK_EQ(o.actual, 640);
    /* All of it. */
    retire(0, 0, 0);
    retire(1, 0, 0);
    o = ohci_tds_outcome(td, n, phys(td[2]));
    CHECK_EQ(o.result, OHCI_DONE);
    CHECK_EQ(o.actual, 10000);
}

int main(void)
{
    for (unsigned i = 0; i < 8; i++)
        td[i] = &pool[i];
    test_ed_flags();
    test_control_in();
    test_control_no_data();
    test_bulk_pages();
    test_outcomes();
    return check_summary("test_ohci_ed");
}
