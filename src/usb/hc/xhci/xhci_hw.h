/* xhci_hw.h — xHCI register, TRB and context layouts (xHCI spec 1.2,
 * chapters 5 and 6). Hardware constants only: the names follow the spec. */
#ifndef USB_HC_XHCI_XHCI_HW_H
#define USB_HC_XHCI_XHCI_HW_H

/* Capability registers (§5.3), offsets from BAR0. */
#define XHCI_CAPLENGTH      0x00
#define XHCI_HCSPARAMS1     0x04      /* MaxSlots 7:0, MaxIntrs 18:8, MaxPorts 31:24 */
#define XHCI_HCSPARAMS2     0x08      /* scratchpad count hi 25:21, lo 31:27 */
#define XHCI_HCCPARAMS1     0x10      /* AC64 0, CSZ 2, PPC 3, xECP 31:16 */
#define XHCI_DBOFF          0x14
#define XHCI_RTSOFF         0x18
#define HCCP1_CSZ           (1u << 2) /* 64-byte contexts */
#define HCCP1_PPC           (1u << 3) /* ports have power switches */

/* Operational registers (§5.4), offsets from BAR0 + CAPLENGTH. */
#define XHCI_USBCMD         0x00
#define XHCI_USBSTS         0x04
#define XHCI_PAGESIZE       0x08
#define XHCI_CRCR           0x18
#define XHCI_DCBAAP         0x30
#define XHCI_CONFIG         0x38
#define XHCI_PORTSC(p)      (0x400 + 0x10 * ((p) - 1))   /* ports count from 1 */
#define USBCMD_RS           (1u << 0)
#define USBCMD_HCRST        (1u << 1)
#define USBSTS_HCH          (1u << 0)  /* HCHalted */
#define USBSTS_CNR          (1u << 11) /* controller not ready */
#define CRCR_RCS            (1u << 0)

/* PORTSC (§5.4.8). */
#define PORTSC_CCS          (1u << 0)  /* current connect status */
#define PORTSC_PED          (1u << 1)  /* enabled (RW1C: writing 1 disables) */
#define PORTSC_PR           (1u << 4)  /* port reset */
#define PORTSC_PP           (1u << 9)  /* port power */
#define PORTSC_SPEED(v)     (((v) >> 10) & 0xF)
#define PORTSC_CHANGES      (0x7Fu << 17)  /* CSC PEC WRC OCC PRC PLC CEC (RW1C) */
#define PORTSC_CSC          (1u << 17) /* connect status change */
#define PORTSC_PRC          (1u << 21)
#define PORTSC_KEEP         (PORTSC_PP | (3u << 14) | (7u << 25))  /* PP, PIC, wake bits */

/* Runtime registers (§5.5): interrupter 0. */
#define XHCI_IR0            0x20
#define IR_ERSTSZ           0x08
#define IR_ERSTBA           0x10
#define IR_ERDP             0x18
#define ERDP_EHB            (1u << 3)  /* event handler busy (RW1C) */

/* Extended capabilities (§7). */
#define XECP_LEGACY         1          /* USB Legacy Support */
#define XECP_PROTOCOL       2          /* Supported Protocol */
#define USBLEGSUP_BIOS      (1u << 16) /* HC BIOS Owned Semaphore */
#define USBLEGSUP_OS        (1u << 24) /* HC OS Owned Semaphore */
#define USBLEGCTLSTS_SMI_EN ((1u << 0) | (1u << 4) | (0x7u << 13))
#define USBLEGCTLSTS_SMI_ST (0x7u << 29)   /* RW1C SMI status bits */

/* Port speeds (PORTSC and slot context) are the default protocol speed
 * IDs: usb.h's SPEED_*. */

/* TRB control word (§6.4). */
#define TRB_CYCLE           (1u << 0)
#define TRB_TC              (1u << 1)  /* link: toggle cycle */
#define TRB_ISP             (1u << 2)  /* interrupt on short packet */
#define TRB_IOC             (1u << 5)
#define TRB_IDT             (1u << 6)  /* immediate data (setup stage) */
#define TRB_DIR_IN          (1u << 16) /* data/status stage direction */
#define TRB_TYPE(t)         ((uint32_t)(t) << 10)
#define TRB_GET_TYPE(c)     (((c) >> 10) & 0x3F)
#define TRB_SLOT(s)         ((uint32_t)(s) << 24)
#define TRB_EP(e)           ((uint32_t)(e) << 16)
#define TRT_NONE            0u
#define TRT_OUT             (2u << 16)
#define TRT_IN              (3u << 16)

enum trb_type {
    TRB_NORMAL = 1,
    TRB_SETUP = 2,
    TRB_DATA = 3,
    TRB_STATUS = 4,
    TRB_LINK = 6,
    TRB_ENABLE_SLOT = 9,
    TRB_DISABLE_SLOT = 10,
    TRB_ADDRESS_DEVICE = 11,
    TRB_CONFIGURE_EP = 12,
    TRB_EVALUATE_CTX = 13,
    TRB_RESET_EP = 14,
    TRB_STOP_EP = 15,
    TRB_SET_TR_DEQ = 16,
    TRB_EV_TRANSFER = 32,
    TRB_EV_COMMAND = 33,
    TRB_EV_PORT = 34,
};

/* Completion codes (§6.4.5) are usb.h's CC_*. */

/* Contexts (§6.2): 32 or 64 bytes each (CSZ). Dword indices. */
#define SLOT_ROUTE_MASK   0xFFFFFu
#define SLOT_SPEED(s)     ((uint32_t)(s) << 20)
#define SLOT_HUB          (1u << 26)
#define SLOT_ENTRIES(n)   ((uint32_t)(n) << 27)
#define SLOT_ROOT_PORT(p) ((uint32_t)(p) << 16)
#define SLOT_NPORTS(n)    ((uint32_t)(n) << 24)
#define SLOT_TT_SLOT(s)   ((uint32_t)(s))
#define SLOT_TT_PORT(p)   ((uint32_t)(p) << 8)
#define EP_INTERVAL(i)    ((uint32_t)(i) << 16)
#define EP_CERR(n)        ((uint32_t)(n) << 1)
#define EP_TYPE(t)        ((uint32_t)(t) << 3)
#define EP_MPS(m)         ((uint32_t)(m) << 16)
#define EP_STATE(dw0)     ((dw0) & 7)
#define EPT_BULK_OUT      2
#define EPT_INT_OUT       3
#define EPT_CONTROL       4
#define EPT_BULK_IN       6
#define EPT_INT_IN        7

#endif
