/* e1000desc.c — legacy and advanced descriptors (e1000desc.h). */
#include "net/e1000desc.h"
#include <stddef.h>

/* Legacy receive and transmit descriptors (8254x SDM §3.2.3, §3.3.3). */
struct legacy_rx {
    uint64_t addr;
    uint16_t length;
    uint16_t csum;
    uint8_t status;
    uint8_t errors;                  /* CE SE SEQ CXE RXE and the checksum errors */
    uint16_t special;
};
struct legacy_tx {
    uint64_t addr;
    uint16_t length;
    uint8_t cso;
    uint8_t cmd;
    uint8_t status;
    uint8_t css;
    uint16_t special;
};
_Static_assert(sizeof(struct legacy_rx) == E1000DESC_BYTES, "legacy receive descriptor");
_Static_assert(sizeof(struct legacy_tx) == E1000DESC_BYTES, "legacy transmit descriptor");
_Static_assert(offsetof(struct legacy_rx, status) == 12, "legacy RDESC.STATUS at byte 12");
_Static_assert(offsetof(struct legacy_tx, status) == 12, "legacy TDESC.STA at byte 12");
#define LEG_RXD_DD   (1u << 0)
#define LEG_RXD_EOP  (1u << 1)
#define LEG_TXD_EOP  (1u << 0)        /* cmd */
#define LEG_TXD_IFCS (1u << 1)
#define LEG_TXD_RS   (1u << 3)
#define LEG_TXD_DD   (1u << 0)        /* status */

/* Advanced receive descriptor, one buffer (82576 §7.1.5.1, §7.1.5.2):
 * read as two addresses; written back as below. The header address is 0
 * (no header split), and its bit 0 is where DD comes back. */
struct adv_rx_read {
    uint64_t pkt_addr;                /* bit 0: NSE (no snoop), 0 here */
    uint64_t hdr_addr;
};
struct adv_rx_wb {
    uint32_t info;                    /* RSS type, packet type, HDR_LEN, SPH */
    uint32_t rss;                     /* RSS hash, or fragment checksum and IP ID */
    uint32_t status_error;            /* extended status 19:0, extended errors 31:20 */
    uint16_t length;                  /* PKT_LEN */
    uint16_t vlan;
};
_Static_assert(sizeof(struct adv_rx_read) == E1000DESC_BYTES, "advanced receive read format");
_Static_assert(sizeof(struct adv_rx_wb) == E1000DESC_BYTES, "advanced receive write-back");
_Static_assert(offsetof(struct adv_rx_wb, status_error) == 8, "STATUS/ERROR in dword 2");
_Static_assert(offsetof(struct adv_rx_wb, length) == 12, "PKT_LEN in dword 3");
#define ADV_RXD_DD     (1u << 0)
#define ADV_RXD_EOP    (1u << 1)
/* Extended errors, bits 31:20: RXE 31, IPE 30, L4E 29 and the part's
 * other error bits (Linux's igb drops on CE 24, SE 25, SEQ 26, CXE 28,
 * RXE 31); reserved bits read 0. Any bit set makes the frame bad. The
 * driver turns receive checksum offload off (RXCSUM 0), so IPE and L4E
 * stay clear and the stack checks its own sums, as on the legacy parts. */
#define ADV_RXD_ERRORS 0xFFF00000u

/* Advanced transmit data descriptor (82576 §7.2.2.3): one buffer, the
 * whole frame; the write-back leaves only STA (DD) in the last dword. */
struct adv_tx_read {
    uint64_t addr;
    uint32_t cmd_type_len;            /* DTALEN 15:0, DTYP 23:20, DCMD 31:24 */
    uint32_t olinfo_status;           /* STA 3:0, IDX 6:4, POPTS 13:8, PAYLEN 31:14 */
};
struct adv_tx_wb {
    uint64_t reserved;
    uint32_t nxtseq_seed;
    uint32_t status;                  /* STA: DD at bit 0, bits 3:1 reserved */
};
_Static_assert(sizeof(struct adv_tx_read) == E1000DESC_BYTES, "advanced transmit data descriptor");
_Static_assert(sizeof(struct adv_tx_wb) == E1000DESC_BYTES, "advanced transmit write-back");
_Static_assert(offsetof(struct adv_tx_wb, status) == offsetof(struct adv_tx_read, olinfo_status),
               "STA written back over OLINFO_STATUS");
#define ADV_TXD_DTYP_DATA    (0x3u << 20)
#define ADV_TXD_DCMD_EOP     (1u << 24)
#define ADV_TXD_DCMD_IFCS    (1u << 25)
#define ADV_TXD_DCMD_RS      (1u << 27)
#define ADV_TXD_DCMD_DEXT    (1u << 29)
#define ADV_TXD_PAYLEN_SHIFT 14        /* single send: PAYLEN is the whole frame */
#define ADV_TXD_DD           (1u << 0)

static volatile void *desc_at(const void *ring, unsigned i)
{
    return (volatile uint8_t *)ring + (size_t)i * E1000DESC_BYTES;
}

void e1000desc_rx_give(enum e1000desc_format f, void *ring, unsigned i, uint64_t buf)
{
    if (f == E1000DESC_ADVANCED) {
        volatile struct adv_rx_read *r = desc_at(ring, i);
        r->pkt_addr = buf;
        r->hdr_addr = 0;                       /* and so DD clear */
    } else {
        volatile struct legacy_rx *r = desc_at(ring, i);
        r->addr = buf;
        r->status = 0;
    }
}

bool e1000desc_rx_done(enum e1000desc_format f, const void *ring, unsigned i, unsigned *len,
                       uint32_t *errors, bool *eop)
{
    uint32_t status;
    if (f == E1000DESC_ADVANCED) {
        volatile struct adv_rx_wb *w = desc_at(ring, i);
        status = w->status_error;
        if (!(status & ADV_RXD_DD))
            return false;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);   /* DD before the rest */
        status = w->status_error;
        *len = w->length;
        *errors = status & ADV_RXD_ERRORS, *eop = status & ADV_RXD_EOP;
    } else {
        volatile struct legacy_rx *w = desc_at(ring, i);
        if (!(w->status & LEG_RXD_DD))
            return false;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        *len = w->length;
        *errors = w->errors, *eop = w->status & LEG_RXD_EOP;
    }
    return true;
}

void e1000desc_tx_put(enum e1000desc_format f, void *ring, unsigned i, uint64_t buf,
                      unsigned len)
{
    if (f == E1000DESC_ADVANCED) {
        volatile struct adv_tx_read *t = desc_at(ring, i);
        t->addr = buf;
        t->olinfo_status = (uint32_t)len << ADV_TXD_PAYLEN_SHIFT;   /* STA (DD) cleared */
        t->cmd_type_len = len | ADV_TXD_DTYP_DATA | ADV_TXD_DCMD_EOP | ADV_TXD_DCMD_IFCS |
                          ADV_TXD_DCMD_RS | ADV_TXD_DCMD_DEXT;
    } else {
        volatile struct legacy_tx *t = desc_at(ring, i);
        t->addr = buf;
        t->length = (uint16_t)len;
        t->cso = t->css = 0;
        t->special = 0;
        t->status = 0;
        t->cmd = LEG_TXD_EOP | LEG_TXD_IFCS | LEG_TXD_RS;
    }
}

bool e1000desc_tx_done(enum e1000desc_format f, const void *ring, unsigned i)
{
    if (f == E1000DESC_ADVANCED)
        return ((volatile struct adv_tx_wb *)desc_at(ring, i))->status & ADV_TXD_DD;
    return ((volatile struct legacy_tx *)desc_at(ring, i))->status & LEG_TXD_DD;
}
