/* ehci_qh.c — queue head and qTD fields (EHCI §3.5, §3.6, §4.12.2). */
#include "usb/hc/ehci/ehci_qh.h"
#include "lib/kstring.h"
#include "usb/core/usb.h"

#define QTD_CERR_MAX 3                /* retries on transaction errors */

static uint32_t eps(uint8_t speed)
{
    return speed == SPEED_HIGH ? EPS_HIGH : speed == SPEED_LOW ? EPS_LOW
                                                               : EPS_FULL;
}

void ehci_qh_init(struct ehci_qh *qh, const struct ehci_ep_desc *ep)
{
    memset(qh, 0, sizeof *qh);
    bool high = ep->speed == SPEED_HIGH;
    /* Characteristics: a control endpoint takes its toggle from each qTD
     * (setup 0, data 1.., status 1); a full/low-speed one sets C. The
     * NAK counter is for high-speed async endpoints only (§4.9, §4.12). */
    uint32_t info1 = QH_ADDR(ep->addr) | QH_ENDPT(ep->endpoint) | QH_EPS(eps(ep->speed)) |
                     QH_MPS(ep->mps);
    if (ep->control)
        info1 |= QH_DTC | (high ? 0 : QH_CTRL_EP);
    if (high && !ep->interrupt)
        info1 |= QH_RL(EHCI_RL_HIGH);
    /* Capabilities: one transaction per micro-frame; the transaction
     * translator of a low/full-speed device behind a high-speed hub;
     * when to start (and complete) an interrupt endpoint's transactions. */
    uint32_t info2 = QH_MULT(1);
    if (!high && ep->tt_hub)
        info2 |= QH_HUB_ADDR(ep->tt_hub) | QH_PORT(ep->tt_port);
    if (ep->interrupt)
        info2 |= QH_SMASK(EHCI_SMASK_INTR) | (high ? 0 : QH_CMASK(EHCI_CMASK_SPLIT));
    qh->link = LINK_T;
    qh->info1 = info1;
    qh->info2 = info2;
    qh->next = LINK_T;
    qh->alt_next = LINK_T;
}

uint32_t ehci_qtd_fill(struct ehci_qtd *t, uint8_t pid, bool toggle, uint32_t buf, uint32_t len,
                       bool ioc)
{
    memset(t, 0, sizeof *t);
    uint32_t room = QTD_MAX_BYTES - (buf & (QTD_PAGE - 1));
    uint32_t take = len;
    if (take > room)
        take = room & ~(QTD_PAGE - 1);       /* whole pages: full packets only */
    t->next = LINK_T;
    t->alt_next = LINK_T;
    t->token = QTD_ACTIVE | QTD_PID(pid) | QTD_CERR(QTD_CERR_MAX) | QTD_BYTES(take) |
               (ioc ? QTD_IOC : 0) | (toggle ? QTD_TOGGLE : 0);
    t->buf[0] = buf;
    for (unsigned i = 1; i < 5; i++)         /* the pages after the first */
        t->buf[i] = (buf & ~(QTD_PAGE - 1)) + i * QTD_PAGE;
    return take;
}

int ehci_qtd_cc(uint32_t token)
{
    if (token & QTD_HALTED) {
        if (token & QTD_BABBLE)
            return CC_BABBLE;
        if (token & QTD_BUFFER_ERR)
            return CC_DATA_BUFFER;
        if (token & QTD_XACT_ERR)
            return CC_TRANSACTION;
        return CC_STALL;
    }
    return QTD_GET_BYTES(token) ? CC_SHORT_PACKET : CC_SUCCESS;
}
