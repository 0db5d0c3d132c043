/* rtl8111.h — the Realtek RTL8111/8168 family (PCI Express gigabit, 10EC:8168
 * and 10EC:8161) in C+ mode: one transmit and one receive ring of 16-byte
 * descriptors, polled.
 *
 * Written to Realtek's RTL8111/8168 datasheets and the public register
 * documentation; QEMU has no model of this chip, so the driver has not
 * run on hardware: its logic is tested against a register model in
 * test/unit/test_rtl8111.c, and docs/real-hardware.md says so.
 *
 * Every register access goes through struct rtl_regs, so the host test
 * can supply the model; rtl8111pci.c supplies MMIO. Ring memory is passed
 * in: physical address == pointer (the kernel's identity map; in the host
 * test the model reads the pointers). Pure: no allocation, no console. */
#ifndef NET_RTL8111_H
#define NET_RTL8111_H
#include <stdbool.h>
#include <stdint.h>
#include "net/nic.h"

/* Registers (RTL8111/8168 datasheet, "Register Descriptions"). */
#define RTL_IDR0        0x00         /* ID registers: the MAC address, 6 bytes */
#define RTL_MAR0        0x08         /* multicast filter, 8 bytes */
#define RTL_TNPDS       0x20         /* transmit normal-priority descriptors start (64-bit) */
#define RTL_CR          0x37         /* command register */
#define RTL_TPPOLL      0x38         /* transmit priority polling */
#define RTL_IMR         0x3C         /* interrupt mask (16-bit) */
#define RTL_ISR         0x3E         /* interrupt status (16-bit, write 1 to clear) */
#define RTL_TCR         0x40         /* transmit configuration (TxConfig) */
#define RTL_RCR         0x44         /* receive configuration (RxConfig) */
#define RTL_9346CR      0x50         /* 93C46 command: config register write enable */
#define RTL_CONFIG2     0x53
#define RTL_CONFIG5     0x56
#define RTL_PHYSTATUS   0x6C         /* PHY status (8-bit) */
#define RTL_MCU         0xD3         /* (8168E-VL and later) NOW_IS_OOB */
#define RTL_MTPS        0xEC         /* max transmit packet size / early transmit, 128-byte units */
#define RTL_RMS         0xDA         /* receive packet maximum size (16-bit) */
#define RTL_CPCR        0xE0         /* C+ command (16-bit) */
#define RTL_RDSAR       0xE4         /* receive descriptors start (64-bit) */
#define RTL_MISC        0xF0         /* (8168G and later) RXDV_GATED_EN */
#define RTL_REGS_LEN    0x100

#define CR_RST          0x10         /* software reset; reads 1 until done */
#define CR_RE           0x08         /* receiver enable */
#define CR_TE           0x04         /* transmitter enable */
#define TPPOLL_NPQ      0x40         /* normal-priority queue polling */
#define CFG9346_UNLOCK  0xC0
#define CFG9346_LOCK    0x00
#define PHYSTATUS_LINK  0x02
#define RCR_AAP         0x01         /* accept all physical (promiscuous) */
#define RCR_APM         0x02         /* accept physical match (our MAC) */
#define RCR_AM          0x04         /* accept multicast */
#define RCR_AB          0x08         /* accept broadcast */
#define RCR_ACCEPT_MASK 0x3F
#define RCR_DMA_BURST   (7u << 8)    /* MXDMA: unlimited */
#define RCR_EARLY_OFF   (1u << 11)   /* (8168G+) */
#define RCR_FIFO_THRESH (7u << 13)   /* RXFTH: no threshold (8169, 8168B) */
#define RCR_MULTI_EN    (1u << 14)   /* (8168C+) */
#define RCR_128_INT_EN  (1u << 15)   /* (8168B+) */
#define TCR_AUTO_FIFO   (1u << 7)    /* (8168E-VL+) */
#define TCR_DMA_BURST   (7u << 8)    /* MXDMA: unlimited */
#define TCR_IFG         (3u << 24)   /* interframe gap: the standard 96 bit times */
#define TCR_XID_SHIFT   20           /* chip version: bits 30:26 and 23:20 */
#define TCR_XID_MASK    0xFCF
#define CPCR_RXCHKSUM   0x20
#define CPCR_RXVLAN     0x40
#define MCU_NOW_IS_OOB  0x80         /* the management firmware owns the MAC */
#define MISC_RXDV_GATED (1u << 19)   /* receive path gated off (firmware left it so) */
#define CONFIG2_CLKREQ  0x80         /* (8168E-VL+) PCIe CLKREQ# */
#define CONFIG5_ASPM    0x01         /* (8168E-VL+) ASPM L0s/L1 entry by the chip */
#define MTPS_8168       0x3F         /* 8064 bytes: no early transmit */
#define MTPS_EVL        0x27         /* 8168E-VL+: the early-transmit size */

/* Descriptors (C+ mode): opts1, opts2 (VLAN), buffer address. */
struct rtl_desc {
    uint32_t opts1;
    uint32_t opts2;
    uint64_t addr;
};
_Static_assert(sizeof(struct rtl_desc) == 16, "C+ descriptor is 16 bytes");

#define DESC_OWN       (1u << 31)   /* the NIC owns it */
#define DESC_EOR       (1u << 30)   /* end of ring: the next one is the first */
#define DESC_FS        (1u << 29)   /* first segment of a frame */
#define DESC_LS        (1u << 28)   /* last segment */
#define RXD_RES        (1u << 21)   /* receive error summary (CRC, runt, watchdog, overflow) */
#define RXD_LEN_MASK   0x3FFF       /* bytes received, FCS included / buffer size */
#define TXD_LEN_MASK   0xFFFF
#define RTL_FCS_LEN    4
#define RTL_DESC_ALIGN 256          /* TNPDS/RDSAR: 256-byte aligned */

#define RTL_RING       64           /* descriptors per ring */
#define RTL_BUF_LEN    2048         /* one frame per buffer (8-byte multiple) */

/* The memory the chip reads and writes: rings first (256-byte aligned). */
struct rtl_mem {
    struct rtl_desc tx[RTL_RING];
    struct rtl_desc rx[RTL_RING];
    uint8_t tx_buf[RTL_RING][RTL_BUF_LEN];
    uint8_t rx_buf[RTL_RING][RTL_BUF_LEN];
};

/* Register access and delay: MMIO on hardware, the model in the test. */
struct rtl_regs {
    uint8_t (*r8)(void *ctx, unsigned reg);
    uint16_t (*r16)(void *ctx, unsigned reg);
    uint32_t (*r32)(void *ctx, unsigned reg);
    void (*w8)(void *ctx, unsigned reg, uint8_t v);
    void (*w16)(void *ctx, unsigned reg, uint16_t v);
    void (*w32)(void *ctx, unsigned reg, uint32_t v);
    void (*delay_us)(void *ctx, unsigned us);
    void *ctx;
};

/* A chip family by its XID (TCR bits 30:26, 23:20), with the steps that
 * differ between families. */
struct rtl_family {
    uint16_t mask, xid;
    const char *name;                 /* "RTL8168H" */
    uint32_t rcr;                     /* RCR bits besides the accept bits */
    bool evl_up;                      /* 8168E-VL and later: AUTO_FIFO, NOW_IS_OOB, ASPM off */
    bool rxdv_gate;                   /* 8168G and later: MISC RXDV gate */
};

struct rtl8111 {
    struct rtl_regs io;
    struct rtl_mem *mem;
    const struct rtl_family *family;
    uint16_t xid;
    unsigned tx_head, tx_tail;        /* next to fill, next to reclaim (running counts) */
    unsigned rx_next;                 /* next receive descriptor (running count) */
};

/* The family of an XID, or NULL (unknown: the driver leaves it alone). */
const struct rtl_family *rtl8111_family(uint16_t xid);
/* Reset the chip, read its MAC, lay out the rings and start transmit and
 * receive (accepting broadcast and our MAC). r->io and r->mem set by the
 * caller; mem need not be zeroed. On success n's ops, model and mac are
 * filled and n->priv = r. False with *why (the caller names the device). */
bool rtl8111_start(struct rtl8111 *r, struct nic *n, const char **why);

#endif
