/* uhci_td.c — UHCI TDs of a transfer, and the outcome of a chain
 * (Intel UHCI Design Guide rev 1.1, §3.2). */
#include "usb/hc/uhci/uhci_td.h"

#define TD_RETRIES 3               /* C_ERR: errors before the TD is retired */
#define SETUP_LEN  8

void uhci_td_fill(struct uhci_td *td, const struct usb_pipe *p, uint8_t pid, bool toggle,
                  uint32_t buf, uint16_t len, uint32_t flags)
{
    td->link = UHCI_LINK_T;
    td->status = TD_ST_ACTIVE | TD_CERR(TD_RETRIES) | (p->low_speed ? TD_LS : 0) | flags |
                 TD_ACTLEN_NONE;
    td->token = pid | TOKEN_ADDR(p->addr) | TOKEN_ENDPT(p->endpoint) |
                (toggle ? TOKEN_TOGGLE : 0) | TOKEN_MAXLEN((uint32_t)len);
    td->buffer = len ? buf : 0;
}

/* Link tds[0..n) depth first, the last one terminating. */
static void link_chain(struct uhci_td *tds, uint32_t phys, unsigned n)
{
    for (unsigned i = 0; i + 1 < n; i++)
        tds[i].link = (phys + (i + 1) * (uint32_t)sizeof(struct uhci_td)) | UHCI_LINK_VF;
    tds[n - 1].link = UHCI_LINK_T;
}

/* Packets of len bytes from buf into tds, toggles alternating from
 * `toggle`: how many, or 0 when more than max. */
static unsigned packets(struct uhci_td *tds, unsigned max, const struct usb_pipe *p,
                        bool in, bool toggle, uint32_t buf, uint32_t len)
{
    unsigned n = 0;
    uint32_t done = 0;
    do {
        uint32_t chunk = len - done < p->mps ? len - done : p->mps;
        if (n == max)
            return 0;
        uhci_td_fill(&tds[n++], p, in ? UHCI_PID_IN : UHCI_PID_OUT, toggle, buf + done,
                     (uint16_t)chunk, in ? TD_SPD : 0);
        toggle = !toggle;
        done += chunk;
    } while (done < len);
    return n;
}

unsigned uhci_control_tds(struct uhci_td *tds, uint32_t phys, unsigned max,
                          const struct usb_pipe *p, uint32_t setup_phys, bool in,
                          uint32_t buf, uint16_t len)
{
    if (max < 2)
        return 0;
    uhci_td_fill(&tds[0], p, UHCI_PID_SETUP, false, setup_phys, SETUP_LEN, 0);
    unsigned n = 1;
    if (len) {
        unsigned d = packets(&tds[1], max - 2, p, in, true, buf, len);
        if (!d)
            return 0;
        n += d;
    }
    /* Status stage: the other direction than the data (IN when none). */
    uhci_td_fill(&tds[n++], p, in && len ? UHCI_PID_OUT : UHCI_PID_IN, true, 0, 0, 0);
    link_chain(tds, phys, n);
    return n;
}

unsigned uhci_data_tds(struct uhci_td *tds, uint32_t phys, unsigned max,
                       const struct usb_pipe *p, bool in, bool toggle, uint32_t buf,
                       uint32_t len)
{
    unsigned n = packets(tds, max, p, in, toggle, buf, len);
    if (n)
        link_chain(tds, phys, n);
    return n;
}

struct uhci_outcome uhci_tds_outcome(const struct uhci_td *tds, unsigned n)
{
    struct uhci_outcome o = { .result = UHCI_DONE, .at = n };
    for (unsigned i = 0; i < n; i++) {
        uint32_t st = tds[i].status, tok = tds[i].token;
        if (st & TD_ST_ACTIVE) {
            o.result = UHCI_ACTIVE;
        } else if (st & TD_ST_ERRORS) {
            /* Stalled alone is the STALL handshake; with another error
             * bit it is that error, counted down to 0 (§3.2.2). */
            o.result = (st & TD_ST_ERRORS) == TD_ST_STALLED ? UHCI_STALL : UHCI_FAILED;
        } else {
            uint32_t got = TD_ACTLEN(st);
            o.packets++;
            if (TOKEN_PID(tok) != UHCI_PID_SETUP)
                o.actual += got;
            if (TOKEN_PID(tok) == UHCI_PID_IN && got < TOKEN_MAXLEN_OF(tok) && i + 1 < n)
                o.result = UHCI_SHORT;
            else
                continue;
        }
        o.at = i;
        o.status = st;
        break;
    }
    return o;
}

const char *uhci_td_error(uint32_t status)
{
    if (status & TD_ST_BABBLE)
        return "babble";
    if (status & TD_ST_DBUF)
        return "data buffer error";
    if (status & TD_ST_CRC_TIMEOUT)
        return "no answer (CRC/timeout)";
    if (status & TD_ST_BITSTUFF)
        return "bitstuff error";
    if (status & TD_ST_STALLED)
        return "stalled";
    return "no error";
}
