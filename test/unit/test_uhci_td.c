/* test_uhci_td.c — UHCI TDs of control, bulk and interrupt transfers and
 * the outcome of a chain, checked bit by bit against the Intel UHCI
 * Design Guide rev 1.1 §3.2 (the numbers below are the guide's, not the
 * header's macros). */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "usb/hc/uhci/uhci_td.h"

#define PHYS  0x00123400u           /* where the TDs "lie" */
#define SETUP 0x00200000u
#define BUF   0x00300000u

static struct uhci_td tds[16];

/* What the controller writes back into a TD it retired: Active off,
 * ActLen = bytes - 1 (0x7FF for none), plus error bits. */
static void retire(struct uhci_td *td, uint32_t bytes, uint32_t errors)
{
    td->status = (td->status & ~(0x00FF07FFu)) | ((bytes - 1) & 0x7FF) | errors;
}

static void test_single_td_bits(void)
{
    struct usb_pipe p = { .addr = 5, .endpoint = 1, .low_speed = true, .mps = 8 };
    uhci_td_fill(&tds[0], &p, 0x69, true, BUF, 8, 1u << 29);
    CHECK_EQ(tds[0].link, 1);                      /* T: terminate */
    CHECK(tds[0].status & (1u << 23));             /* Active */
    CHECK(tds[0].status & (1u << 26));             /* LS: PRE before each packet */
    CHECK(tds[0].status & (1u << 29));             /* SPD */
    CHECK_EQ((tds[0].status >> 27) & 3, 3);        /* C_ERR = 3 */
    CHECK_EQ(tds[0].status & 0x7FF, 0x7FF);        /* ActLen: nothing yet */
    CHECK_EQ(tds[0].token & 0xFF, 0x69);           /* PID IN */
    CHECK_EQ((tds[0].token >> 8) & 0x7F, 5);       /* device address */
    CHECK_EQ((tds[0].token >> 15) & 0xF, 1);       /* endpoint */
    CHECK(tds[0].token & (1u << 19));              /* DATA1 */
    CHECK_EQ(tds[0].token >> 21, 7);               /* MaxLen = 8 - 1 */
    CHECK_EQ(tds[0].buffer, BUF);
    p.low_speed = false;
    uhci_td_fill(&tds[0], &p, 0xE1, false, BUF, 0, 0);
    CHECK_EQ(tds[0].token >> 21, 0x7FF);           /* null data packet */
    CHECK_EQ(tds[0].buffer, 0);
    CHECK(!(tds[0].status & (1u << 26)));
    CHECK(!(tds[0].token & (1u << 19)));           /* DATA0 */
}

static void test_control_in(void)
{
    /* GET_DESCRIPTOR(device, 18 bytes) with an 8-byte EP0: SETUP, three
     * IN packets (8, 8, 2), OUT status. */
    struct usb_pipe p = { .addr = 0, .endpoint = 0, .mps = 8 };
    memset(tds, 0xAA, sizeof tds);
    unsigned n = uhci_control_tds(tds, PHYS, 16, &p, SETUP, true, BUF, 18);
    CHECK_EQ(n, 5);
    CHECK_EQ(tds[0].token & 0xFF, 0x2D);           /* SETUP */
    CHECK_EQ(tds[0].token >> 21, 7);               /* 8 bytes */
    CHECK(!(tds[0].token & (1u << 19)));           /* DATA0 */
    CHECK_EQ(tds[0].buffer, SETUP);
    uint32_t lens[3] = { 8, 8, 2 };
    for (unsigned i = 1; i <= 3; i++) {
        CHECK_EQ(tds[i].token & 0xFF, 0x69);
        CHECK_EQ((tds[i].token >> 21) + 1, lens[i - 1]);
        CHECK_EQ(tds[i].buffer, BUF + 8 * (i - 1));
        CHECK_EQ(!!(tds[i].token & (1u << 19)), i % 2);   /* DATA1, DATA0, DATA1 */
        CHECK(tds[i].status & (1u << 29));               /* SPD on IN */
    }
    CHECK_EQ(tds[4].token & 0xFF, 0xE1);           /* status: OUT */
    CHECK(tds[4].token & (1u << 19));              /* DATA1 */
    CHECK_EQ(tds[4].token >> 21, 0x7FF);           /* zero length */
    for (unsigned i = 0; i < 4; i++)               /* depth first, 32-byte stride */
        CHECK_EQ(tds[i].link, (PHYS + 32 * (i + 1)) | 4);
    CHECK_EQ(tds[4].link, 1);
    CHECK_EQ(uhci_control_tds(tds, PHYS, 4, &p, SETUP, true, BUF, 18), 0);  /* no room */
}

static void test_control_no_data_and_out(void)
{
    struct usb_pipe p = { .addr = 3, .endpoint = 0, .mps = 64 };
    CHECK_EQ(uhci_control_tds(tds, PHYS, 16, &p, SETUP, false, 0, 0), 2);  /* SET_ADDRESS */
    CHECK_EQ(tds[1].token & 0xFF, 0x69);           /* status stage IN */
    CHECK(tds[1].token & (1u << 19));
    CHECK_EQ(uhci_control_tds(tds, PHYS, 16, &p, SETUP, false, BUF, 4), 3);
    CHECK_EQ(tds[1].token & 0xFF, 0xE1);           /* data OUT, no SPD */
    CHECK(!(tds[1].status & (1u << 29)));
    CHECK_EQ(tds[2].token & 0xFF, 0x69);           /* status IN */
}

static void test_bulk_toggles(void)
{
    struct usb_pipe p = { .addr = 2, .endpoint = 2, .mps = 64 };
    unsigned n = uhci_data_tds(tds, PHYS, 16, &p, false, true, BUF, 200);
    CHECK_EQ(n, 4);                                /* 64 64 64 8 */
    CHECK_EQ((tds[3].token >> 21) + 1, 8);
    CHECK(tds[0].token & (1u << 19));              /* starts at the toggle given */
    CHECK(!(tds[1].token & (1u << 19)));
    CHECK_EQ(uhci_data_tds(tds, PHYS, 3, &p, false, true, BUF, 200), 0);
    CHECK_EQ(uhci_data_tds(tds, PHYS, 16, &p, false, false, BUF, 0), 1);  /* ZLP */
    CHECK_EQ(tds[0].token >> 21, 0x7FF);
}

static void test_outcomes(void)
{
    struct usb_pipe p = { .addr = 1, .endpoint = 0, .mps = 8 };
    unsigned n = uhci_control_tds(tds, PHYS, 16, &p, SETUP, true, BUF, 18);
    struct uhci_outcome o = uhci_tds_outcome(tds, n);
    CHECK_EQ(o.result, UHCI_ACTIVE);
    CHECK_EQ(o.at, 0);
    retire(&tds[0], 8, 0);
    retire(&tds[1], 8, 0);
    o = uhci_tds_outcome(tds, n);
    CHECK_EQ(o.result, UHCI_ACTIVE);
    CHECK_EQ(o.at, 2);
    CHECK_EQ(o.actual, 8);                         /* SETUP bytes not counted */
    retire(&tds[2], 4, 0);                         /* short: the device had 12 bytes */
    o = uhci_tds_outcome(tds, n);
    CHECK_EQ(o.result, UHCI_SHORT);
    CHECK_EQ(o.at, 2);
    CHECK_EQ(o.actual, 12);
    CHECK_EQ(o.packets, 3);
    retire(&tds[2], 8, 0);
    retire(&tds[3], 2, 0);
    retire(&tds[4], 0, 0);                         /* ActLen 0x7FF: zero bytes */
    CHECK_EQ(tds[4].status & 0x7FF, 0x7FF);
    o = uhci_tds_outcome(tds, n);
    CHECK_EQ(o.result, UHCI_DONE);
    CHECK_EQ(o.at, n);
    CHECK_EQ(o.actual, 18);
    CHECK_EQ(o.packets, 5);
    /* A STALL handshake: Stalled alone. */
    n = uhci_control_tds(tds, PHYS, 16, &p, SETUP, true, BUF, 8);
    retire(&tds[0], 8, 0);
    retire(&tds[1], 0, 1u << 22);
    o = uhci_tds_outcome(tds, n);
    CHECK_EQ(o.result, UHCI_STALL);
    CHECK_EQ(o.at, 1);
    CHECK(!strcmp(uhci_td_error(o.status), "stalled"));
    /* Three timeouts: Stalled with CRC/Timeout is a failure, not a STALL. */
    retire(&tds[1], 0, (1u << 22) | (1u << 18));
    o = uhci_tds_outcome(tds, n);
    CHECK_EQ(o.result, UHCI_FAILED);
    CHECK(!strcmp(uhci_td_error(o.status), "no answer (CRC/timeout)"));
    retire(&tds[1], 0, (1u << 22) | (1u << 20));
    CHECK(!strcmp(uhci_td_error(uhci_tds_outcome(tds, n).status), "babble"));
    /* NAK seen but still active: still waiting. */
    tds[1].status = (tds[1].status & ~0x00FF0000u) | (1u << 23) | (1u << 19);
    CHECK_EQ(uhci_tds_outcome(tds, n).result, UHCI_ACTIVE);
    /* An interrupt report of 8 bytes: the last TD may be short without
     * ending the chain early (it is the end). */
    p.low_speed = true;
    n = uhci_data_tds(tds, PHYS, 16, &p, true, false, BUF, 8);
    CHECK_EQ(n, 1);
    retire(&tds[0], 3, 0);
    o = uhci_tds_outcome(tds, n);
    CHECK_EQ(o.result, UHCI_DONE);
    CHECK_EQ(o.actual, 3);
}

int main(void)
{
    test_single_td_bits();
    test_control_in();
    test_control_no_data_and_out();
    test_bulk_toggles();
    test_outcomes();
    return check_summary("test_uhci_td");
}
