/* test_ehci_qh.c — EHCI queue heads and qTDs (usb/hc/ehci/ehci_qh.c) against the
 * field layout of the EHCI specification (rev. 1.0, §3.5 qTD, §3.6 QH,
 * §4.12.3 split transactions), bit positions written out here from the
 * spec rather than taken from ehci_hw.h. QEMU's usb-hub is full-speed
 * only, so a device behind a high-speed hub (split transactions) is
 * checked here and nowhere else. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "usb/core/usb.h"
#include "usb/hc/ehci/ehci_qh.h"

/* QH dword 1 (endpoint characteristics) and dword 2 (capabilities). */
static uint32_t info1(uint32_t addr, uint32_t ep, uint32_t eps, uint32_t dtc, uint32_t mps,
                      uint32_t c, uint32_t rl)
{
    return addr | ep << 8 | eps << 12 | dtc << 14 | mps << 16 | c << 27 | rl << 28;
}

static uint32_t info2(uint32_t smask, uint32_t cmask, uint32_t hub, uint32_t port, uint32_t mult)
{
    return smask | cmask << 8 | hub << 16 | port << 23 | mult << 30;
}

/* A low-speed keyboard (address 5, EP1 IN, 8 bytes) on port 2 of a
 * high-speed hub at address 3: an interrupt split transaction. */
static void test_keyboard_behind_high_speed_hub(void)
{
    struct ehci_qh qh;
    memset(&qh, 0xAA, sizeof qh);
    struct ehci_ep_desc ep = { .addr = 5, .endpoint = 1, .speed = SPEED_LOW, .mps = 8, .interrupt = true, .tt_hub = 3, .tt_port = 2 };
    ehci_qh_init(&qh, &ep);
    CHECK_EQ(qh.info1, info1(5, 1, 1 /* low */, 0, 8, 0, 0 /* RL 0: periodic */));
    CHECK_EQ(qh.info1, 0x00081105u);
    CHECK_EQ(qh.info2, info2(0x01, 0x1C, 3, 2, 1));
    CHECK_EQ(qh.info2, 0x41031C01u);
    /* Complete-splits two to four micro-frames after the start-split. */
    uint32_t s = qh.info2 & 0xFF, c = (qh.info2 >> 8) & 0xFF;
    CHECK_EQ(c, (s << 2) | (s << 3) | (s << 4));
    /* Terminated link, an idle overlay: no next qTD, not active, not halted. */
    CHECK_EQ(qh.link & 1, 1);
    CHECK_EQ(qh.next & 1, 1);
    CHECK_EQ(qh.alt_next & 1, 1);
    CHECK_EQ(qh.token, 0);
    CHECK_EQ(qh.current, 0);
    for (unsigned i = 0; i < 5; i++)
        CHECK_EQ(qh.buf[i] | qh.buf_hi[i], 0);
}

/* The default control pipe of a full-speed device behind the hub: the
 * toggle from each qTD (DTC), the control endpoint flag C, no S-mask. */
static void test_control_behind_high_speed_hub(void)
{
    struct ehci_qh qh;
    struct ehci_ep_desc ep = { .addr = 0, .endpoint = 0, .speed = SPEED_FULL, .mps = 8, .control = true, .tt_hub = 3, .tt_port = 7 };
    ehci_qh_init(&qh, &ep);
    CHECK_EQ(qh.info1, info1(0, 0, 0 /* full */, 1, 8, 1, 0));
    CHECK_EQ(qh.info1, 0x08084000u);
    CHECK_EQ(qh.info2, info2(0, 0, 3, 7, 1));
    /* Bulk of a full-speed disk behind it: no DTC, no C, still split. */
    struct ehci_ep_desc bulk = { .addr = 9, .endpoint = 2, .speed = SPEED_FULL, .mps = 64, .tt_hub = 3, .tt_port = 7 };
    ehci_qh_init(&qh, &bulk);
    CHECK_EQ(qh.info1, info1(9, 2, 0, 0, 64, 0, 0));
    CHECK_EQ(qh.info2, info2(0, 0, 3, 7, 1));
}

/* High speed: no transaction translator even if one is named; NAK
 * reload on async endpoints; an interrupt endpoint without C-mask. */
static void test_high_speed(void)
{
    struct ehci_qh qh;
    struct ehci_ep_desc bulk = { .addr = 7, .endpoint = 2, .speed = SPEED_HIGH, .mps = 512, .tt_hub = 3, .tt_port = 1 };
    ehci_qh_init(&qh, &bulk);
    CHECK_EQ(qh.info1, info1(7, 2, 2 /* high */, 0, 512, 0, 4));
    CHECK_EQ(qh.info1, 0x42002207u);
    CHECK_EQ(qh.info2, info2(0, 0, 0, 0, 1));
    struct ehci_ep_desc ctl = { .addr = 7, .speed = SPEED_HIGH, .mps = 64, .control = true };
    ehci_qh_init(&qh, &ctl);
    CHECK_EQ(qh.info1, info1(7, 0, 2, 1, 64, 0 /* C only below high speed */, 4));
    struct ehci_ep_desc intr = { .addr = 4, .endpoint = 1, .speed = SPEED_HIGH, .mps = 8, .interrupt = true };
    ehci_qh_init(&qh, &intr);
    CHECK_EQ(qh.info1, info1(4, 1, 2, 0, 8, 0, 0));
    CHECK_EQ(qh.info2, info2(0x01, 0, 0, 0, 1));
}

/* qTD token: status 7:0 (Active 7), PID 9:8, CERR 11:10, IOC 15, total
 * bytes 30:16, toggle 31; five page pointers, the first with its offset. */
static void test_qtd(void)
{
    struct ehci_qtd t;
    memset(&t, 0x55, sizeof t);
    uint32_t take = ehci_qtd_fill(&t, 1 /* IN */, true, 0x12345678u, 0x6000, true);
    CHECK_EQ(take, 0x4000);                      /* whole pages: 0x678 + 0x4000 fits 5 */
    CHECK_EQ(t.token, 0x80u | 1u << 8 | 3u << 10 | 1u << 15 | 0x4000u << 16 | 1u << 31);
    CHECK_EQ(t.buf[0], 0x12345678u);
    CHECK_EQ(t.buf[1], 0x12346000u);
    CHECK_EQ(t.buf[4], 0x12349000u);
    CHECK_EQ(t.next & 1, 1);
    CHECK_EQ(t.alt_next & 1, 1);
    for (unsigned i = 0; i < 5; i++)
        CHECK_EQ(t.buf_hi[i], 0);
    /* A page-aligned buffer: five full pages. */
    CHECK_EQ(ehci_qtd_fill(&t, 0, false, 0x200000u, 0x10000, false), 0x5000);
    CHECK_EQ(t.token, 0x80u | 0u << 8 | 3u << 10 | 0x5000u << 16);
    /* The setup stage: 8 bytes, PID 2, DATA0. */
    CHECK_EQ(ehci_qtd_fill(&t, 2, false, 0x1000u, 8, false), 8);
    CHECK_EQ(t.token, 0x80u | 2u << 8 | 3u << 10 | 8u << 16);
    /* A zero-length status stage. */
    CHECK_EQ(ehci_qtd_fill(&t, 1, true, 0, 0, true), 0);
    CHECK_EQ(t.token, 0x80u | 1u << 8 | 3u << 10 | 1u << 15 | 1u << 31);
}

/* Completion codes (xHCI's numbering, usb.h) from a finished token. */
static void test_completion(void)
{
    CHECK_EQ(ehci_qtd_cc(0), CC_SUCCESS);
    CHECK_EQ(ehci_qtd_cc(5u << 16), CC_SHORT_PACKET);       /* 5 bytes not moved */
    CHECK_EQ(ehci_qtd_cc(0x40), CC_STALL);                  /* halted, no error bit */
    CHECK_EQ(ehci_qtd_cc(0x40 | 0x10), CC_BABBLE);
    CHECK_EQ(ehci_qtd_cc(0x40 | 0x20), CC_DATA_BUFFER);
    CHECK_EQ(ehci_qtd_cc(0x40 | 0x08), CC_TRANSACTION);
}

int main(void)
{
    test_keyboard_behind_high_speed_hub();
    test_control_behind_high_speed_hub();
    test_high_speed();
    test_qtd();
    test_completion();
    return check_summary("ehci_qh");
}
