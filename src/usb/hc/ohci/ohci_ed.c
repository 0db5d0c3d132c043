/* ohci_ed.c — OHCI EDs and general TDs of a transfer, and the outcome
 * of a queue (OpenHCI 1.0a §4.2, §4.3, §5.2.8). */
#include "usb/hc/ohci/ohci_ed.h"

#define SETUP_LEN 8
#define PAGE      4096u

/* The identity map: a TD's physical address is its address. */
static uint32_t phys(const volatile void *p)
{
    return (uint32_t)(uintptr_t)p;
}

uint32_t ohci_ed_flags(const struct usb_pipe *p, uint32_t dir)
{
    return ED_FA(p->addr) | ED_EN(p->endpoint) | dir | (p->low_speed ? ED_S : 0) |
           ED_MPS(p->mps);
}

/* One TD: `flags` (DP, T, R), condition code NotAccessed, len bytes at
 * buf (none: CBP 0), linked to `next`. */
static void fill(struct ohci_td *td, uint32_t flags, uint32_t buf, uint32_t len,
                 const struct ohci_td *next)
{
    td->flags = flags | GTD_DI_NONE | GTD_CC(OHCI_CC_NOT_ACCESSED);
    td->cbp = len ? buf : 0;
    td->be = len ? buf + len - 1 : 0;
    td->next = phys(next);
    td->start = td->cbp;
    td->len = len;
}

/* td[n] becomes the new empty tail. */
static unsigned close_queue(struct ohci_td *const *td, unsigned n)
{
    *td[n] = (struct ohci_td){ 0 };
    return n;
}

unsigned ohci_control_tds(struct ohci_td *const *td, unsigned max, uint32_t setup_phys,
                          bool in, uint32_t buf, uint16_t len)
{
    unsigned n = len ? 3 : 2;
    if (max < n + 1 || len > OHCI_CONTROL_MAX)
        return 0;
    fill(td[0], GTD_DP_SETUP | GTD_T_DATA0, setup_phys, SETUP_LEN, td[1]);
    if (len)
        fill(td[1], (in ? GTD_DP_IN | GTD_R : GTD_DP_OUT) | GTD_T_DATA1, buf, len, td[2]);
    /* Status stage: the other direction than the data (IN when none). */
    fill(td[n - 1], (in && len ? GTD_DP_OUT : GTD_DP_IN) | GTD_T_DATA1, 0, 0, td[n]);
    return close_queue(td, n);
}

unsigned ohci_data_tds(struct ohci_td *const *td, unsigned max, uint16_t mps, bool in,
                       uint32_t buf, uint32_t len)
{
    unsigned n = 0;
    uint32_t done = 0;
    do {
        /* From buf + done to the end of the next page, in whole packets. */
        uint32_t room = OHCI_TD_MAX_LEN - ((buf + done) & (PAGE - 1));
        uint32_t chunk = len - done;
        if (chunk > room)
            chunk = room - room % mps;
        if (n + 1 >= max || (!chunk && len))
            return 0;
        bool last = done + chunk == len;
        fill(td[n], (in ? GTD_DP_IN : GTD_DP_OUT) | GTD_T_ED | (last ? GTD_R : 0), buf + done,
             chunk, td[n + 1]);
        n++;
        done += chunk;
    } while (done < len);
    return close_queue(td, n);
}

struct ohci_outcome ohci_tds_outcome(struct ohci_td *const *td, unsigned n, uint32_t ed_head)
{
    struct ohci_outcome o = { .result = OHCI_ACTIVE, .at = n };
    uint32_t head = ed_head & ED_PTR_MASK;
    unsigned i;
    for (i = 0; i < n && phys(td[i]) != head; i++) {        /* retired */
        uint8_t cc = (uint8_t)GTD_CC_OF(td[i]->flags);
        if (GTD_DP_OF(td[i]->flags) != GTD_DP_OF(GTD_DP_SETUP))
            o.actual += td[i]->cbp ? td[i]->cbp - td[i]->start : td[i]->len;
        if (cc != OHCI_CC_NOERROR) {
            o.at = i;
            o.cc = cc;
            o.result = cc == OHCI_CC_DATA_UNDERRUN ? OHCI_SHORT
                       : cc == OHCI_CC_STALL       ? OHCI_STALL
                                                   : OHCI_FAILED;
            return o;
        }
    }
    if (i == n && head == phys(td[n]))
        o.result = OHCI_DONE;
    else if (ed_head & ED_HEAD_H)
        o.result = OHCI_FAILED;         /* halted with no failed TD: the ED is broken */
    return o;
}

const char *ohci_cc_name(uint8_t cc)
{
    /* clang-format off */
    static const char *const names[16] = {
        "no error", "CRC error", "bit stuffing error", "data toggle mismatch", "stall",
        "device not responding", "PID check failure", "unexpected PID", "data overrun",
        "data underrun", "reserved code 10", "reserved code 11", "buffer overrun",
        "buffer underrun", "not accessed", "not accessed",
    };
    /* clang-format on */
    return names[cc & 0xF];
}
