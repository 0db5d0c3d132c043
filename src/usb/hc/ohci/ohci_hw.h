/* ohci_hw.h — OHCI registers, HCCA, endpoint and transfer descriptor
 * layouts (OpenHCI Open Host Controller Interface Specification for USB,
 * release 1.0a, chapters 4 and 7). Hardware constants only: the names
 * follow the specification. */
#ifndef USB_HC_OHCI_OHCI_HW_H
#define USB_HC_OHCI_OHCI_HW_H
#include <stdint.h>

#define OHCI_PCI_BAR          0          /* memory space, 4 KiB */

/* Operational registers (§7), offsets from BAR0. */
#define HC_REVISION           0x00
#define HC_CONTROL            0x04
#define HC_COMMAND_STATUS     0x08
#define HC_INTERRUPT_STATUS   0x0C
#define HC_INTERRUPT_ENABLE   0x10
#define HC_INTERRUPT_DISABLE  0x14
#define HC_HCCA               0x18
#define HC_CONTROL_HEAD_ED    0x20
#define HC_CONTROL_CURRENT_ED 0x24
#define HC_BULK_HEAD_ED       0x28
#define HC_BULK_CURRENT_ED    0x2C
#define HC_DONE_HEAD          0x30
#define HC_FM_INTERVAL        0x34
#define HC_FM_NUMBER          0x3C
#define HC_PERIODIC_START     0x40
#define HC_LS_THRESHOLD       0x44
#define HC_RH_DESCRIPTOR_A    0x48
#define HC_RH_DESCRIPTOR_B    0x4C
#define HC_RH_STATUS          0x50
#define HC_RH_PORT_STATUS(p)  (0x54 + 4 * ((p) - 1)) /* ports count from 1 */
#define OHCI_MAX_PORTS        15         /* NDP is at most 15 */

/* HcRevision (§7.1.1): REV 7:0, BCD; 0x10 for 1.0. */
#define REVISION_OF(v)        ((v) & 0xFFu)

/* HcControl (§7.1.2). */
#define CONTROL_CBSR_4_1      3u         /* control/bulk service ratio 4:1 */
#define CONTROL_PLE           (1u << 2)  /* periodic list enable */
#define CONTROL_IE            (1u << 3)  /* isochronous enable */
#define CONTROL_CLE           (1u << 4)  /* control list enable */
#define CONTROL_BLE           (1u << 5)  /* bulk list enable */
#define CONTROL_HCFS_MASK     (3u << 6)  /* host controller functional state */
#define HCFS_RESET            (0u << 6)
#define HCFS_RESUME           (1u << 6)
#define HCFS_OPERATIONAL      (2u << 6)
#define HCFS_SUSPEND          (3u << 6)
#define CONTROL_IR            (1u << 8)  /* interrupt routing: SMI, i.e. SMM owns it */
#define CONTROL_RWC           (1u << 9)  /* remote wakeup connected (kept as found) */

/* HcCommandStatus (§7.1.3): write 1 to set. */
#define CMD_HCR               (1u << 0)  /* host controller reset */
#define CMD_CLF               (1u << 1)  /* control list filled */
#define CMD_BLF               (1u << 2)  /* bulk list filled */
#define CMD_OCR               (1u << 3)  /* ownership change request */

/* HcInterruptStatus / Enable / Disable (§7.1.4-6): write 1 to clear. */
#define INT_SO                (1u << 0)  /* scheduling overrun */
#define INT_WDH               (1u << 1)  /* writeback done head */
#define INT_SF                (1u << 2)  /* start of frame */
#define INT_UE                (1u << 4)  /* unrecoverable error */
#define INT_RHSC              (1u << 6)  /* root hub status change */
#define INT_OC                (1u << 30) /* ownership change */
#define INT_MIE               (1u << 31) /* master interrupt enable */
#define INT_ALL               0xC000007Fu

/* HcFmInterval (§7.3.1): FI 13:0, FSMPS 30:16, FIT 31. */
#define FM_INTERVAL_FI        0x2EDFu    /* 11999: 1 ms of 12 MHz bit times */
#define FM_FI_OF(v)           ((v) & 0x3FFFu)
#define FM_FSMPS(fi)          ((uint32_t)((6 * ((fi) - 210)) / 7) << 16) /* §5.4 */
#define FM_FIT                (1u << 31)
#define PERIODIC_START(fi)    ((fi) * 9 / 10) /* 90% of the frame (§5.1.1.4) */
#define LS_THRESHOLD          0x628u     /* 1576 bit times (§7.3.5 reset value) */

/* HcRhDescriptorA (§7.4.1). */
#define RHA_NDP(v)            ((v) & 0xFFu) /* number of downstream ports */
#define RHA_PSM               (1u << 8)  /* per-port power switching */
#define RHA_NPS               (1u << 9)  /* no power switching: always on */
#define RHA_POTPGT_MS(v)      (((v) >> 24) * 2u) /* power-on to power-good, 2 ms units */
/* HcRhDescriptorB (§7.4.2): PPCM 31:16, ports whose power is switched per port. */
#define RHB_PPCM_ALL          0xFFFE0000u

/* HcRhStatus (§7.4.3), written: */
#define RH_LPSC               (1u << 16) /* SetGlobalPower */
#define RH_CRWE               (1u << 31)

/* HcRhPortStatus (§7.4.4): read meanings, then the write-1 commands. */
#define RP_CCS                (1u << 0)  /* current connect status */
#define RP_PES                (1u << 1)  /* port enable status */
#define RP_PSS                (1u << 2)  /* suspended */
#define RP_PRS                (1u << 4)  /* reset in progress */
#define RP_PPS                (1u << 8)  /* powered */
#define RP_LSDA               (1u << 9)  /* low-speed device attached */
#define RP_CSC                (1u << 16) /* connect status change */
#define RP_PESC               (1u << 17)
#define RP_PSSC               (1u << 18)
#define RP_OCIC               (1u << 19)
#define RP_PRSC               (1u << 20) /* reset complete */
#define RP_CHANGES            (RP_CSC | RP_PESC | RP_PSSC | RP_OCIC | RP_PRSC)
#define RP_SET_PORT_RESET     RP_PRS
#define RP_SET_PORT_POWER     RP_PPS

/* Host Controller Communications Area (§4.4): 256 bytes, 256-aligned. */
#define OHCI_INT_TABLE        32         /* interrupt ED heads, one per 32 ms slot */
struct ohci_hcca {
    volatile uint32_t int_table[OHCI_INT_TABLE];
    volatile uint16_t frame_number;
    volatile uint16_t pad1;
    volatile uint32_t done_head;
    uint8_t reserved[116];
} __attribute__((aligned(256)));
_Static_assert(sizeof(struct ohci_hcca) == 256, "OHCI HCCA is 256 bytes");
_Static_assert(__builtin_offsetof(struct ohci_hcca, done_head) == 0x84, "HccaDoneHead at 0x84");

/* Endpoint descriptor (§4.2): 16 bytes, 16-byte aligned. */
struct ohci_ed {
    volatile uint32_t flags;
    volatile uint32_t tail;              /* TailP: the TD after the last queued */
    volatile uint32_t head;              /* HeadP | C | H */
    volatile uint32_t next;              /* NextED */
} __attribute__((aligned(16)));
_Static_assert(sizeof(struct ohci_ed) == 16, "OHCI ED is 16 bytes");

#define ED_FA(a)     ((uint32_t)(a)) /* function address 6:0 */
#define ED_EN(e)     ((uint32_t)(e) << 7) /* endpoint number 10:7 */
#define ED_DIR_TD    (0u << 11) /* direction from each TD (control) */
#define ED_DIR_OUT   (1u << 11)
#define ED_DIR_IN    (2u << 11)
#define ED_S         (1u << 13) /* low speed */
#define ED_K         (1u << 14) /* skip */
#define ED_MPS(m)    ((uint32_t)(m) << 16) /* 26:16 */
#define ED_MPS_OF(f) (((f) >> 16) & 0x7FFu)
#define ED_HEAD_H    (1u << 0)  /* halted */
#define ED_HEAD_C    (1u << 1)  /* toggle carry */
#define ED_PTR_MASK  0xFFFFFFF0u

/* General transfer descriptor (§4.3.1): 16 bytes, 16-byte aligned; the
 * driver keeps its own fields after them (32-byte stride). */
struct ohci_td {
    volatile uint32_t flags;
    volatile uint32_t cbp;               /* current buffer pointer, 0 when all moved */
    volatile uint32_t next;              /* NextTD */
    volatile uint32_t be;                /* buffer end: the last byte */
    uint32_t start;                      /* driver: cbp as queued (length accounting) */
    uint32_t len;                        /* driver: bytes queued */
    uint32_t sw[2];
} __attribute__((aligned(16)));
_Static_assert(sizeof(struct ohci_td) == 32, "OHCI TD: 16 hardware bytes + 16 software bytes");

#define GTD_R                   (1u << 18) /* buffer rounding: a short packet is no error */
#define GTD_DP_SETUP            (0u << 19)
#define GTD_DP_OUT              (1u << 19)
#define GTD_DP_IN               (2u << 19)
#define GTD_DP_OF(f)            (((f) >> 19) & 3u)
#define GTD_DI_NONE             (7u << 21) /* delay interrupt: no interrupt */
#define GTD_T_ED                (0u << 24) /* data toggle from the ED's carry */
#define GTD_T_DATA0             (2u << 24) /* toggle from the TD: DATA0 */
#define GTD_T_DATA1             (3u << 24) /*                      DATA1 */
#define GTD_EC_OF(f)            (((f) >> 26) & 3u)
#define GTD_CC_OF(f)            ((f) >> 28)
#define GTD_CC(c)               ((uint32_t)(c) << 28)
#define OHCI_TD_MAX_LEN         8192       /* two 4 KiB pages at most (§4.3.1.3.1) */

/* Condition codes (§4.3.3). */
#define OHCI_CC_NOERROR         0x0
#define OHCI_CC_CRC             0x1
#define OHCI_CC_BITSTUFFING     0x2
#define OHCI_CC_TOGGLE_MISMATCH 0x3
#define OHCI_CC_STALL           0x4
#define OHCI_CC_NOT_RESPONDING  0x5
#define OHCI_CC_PID_CHECK       0x6
#define OHCI_CC_UNEXPECTED_PID  0x7
#define OHCI_CC_DATA_OVERRUN    0x8
#define OHCI_CC_DATA_UNDERRUN   0x9
#define OHCI_CC_BUFFER_OVERRUN  0xC
#define OHCI_CC_BUFFER_UNDERRUN 0xD
#define OHCI_CC_NOT_ACCESSED    0xF        /* set by software before queueing */

#endif
