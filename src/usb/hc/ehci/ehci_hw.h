/* ehci_hw.h — EHCI register, queue head and qTD layouts (Enhanced Host
 * Controller Interface Specification for USB, revision 1.0, chapters 2
 * and 3). Hardware constants only: the names follow the spec. */
#ifndef USB_HC_EHCI_EHCI_HW_H
#define USB_HC_EHCI_EHCI_HW_H
#include <stddef.h>
#include <stdint.h>

/* PCI configuration space (§2.1). */
#define EHCI_PCI_USBBASE      0x10      /* BAR0: the memory-mapped registers */

/* Extended capabilities in PCI configuration space (§2.1.7, §5.1). */
#define EECP_LEGACY           1         /* USB Legacy Support */
#define USBLEGSUP_BIOS        (1u << 16) /* HC BIOS Owned Semaphore */
#define USBLEGSUP_OS          (1u << 24) /* HC OS Owned Semaphore */
#define USBLEGCTLSTS          4         /* offset from USBLEGSUP */
#define USBLEGCTLSTS_SMI_EN   (0x3Fu | (0x7u << 13))   /* every SMI enable */
#define USBLEGCTLSTS_SMI_ST   (0x7u << 29)             /* RW1C: OS ownership, PCI command, BAR */

/* Capability registers (§2.2), offsets from BAR0. */
#define EHCI_CAPLENGTH        0x00      /* byte */
#define EHCI_HCSPARAMS        0x04
#define EHCI_HCCPARAMS        0x08
#define HCS_N_PORTS(v)        ((v) & 0xF)
#define HCS_PPC               (1u << 4) /* port power control */
#define HCS_N_CC(v)           (((v) >> 12) & 0xF)      /* companion controllers */
#define HCC_64BIT             (1u << 0) /* 64-bit data structures */
#define HCC_EECP(v)           (((v) >> 8) & 0xFF)

/* Operational registers (§2.3), offsets from BAR0 + CAPLENGTH. */
#define EHCI_USBCMD           0x00
#define EHCI_USBSTS           0x04
#define EHCI_USBINTR          0x08
#define EHCI_FRINDEX          0x0C
#define EHCI_CTRLDSSEGMENT    0x10
#define EHCI_PERIODICLISTBASE 0x14
#define EHCI_ASYNCLISTADDR    0x18
#define EHCI_CONFIGFLAG       0x40
#define EHCI_PORTSC(p)        (0x44 + 4 * ((p) - 1))   /* ports count from 1 */
#define USBCMD_RS             (1u << 0)
#define USBCMD_HCRESET        (1u << 1)
#define USBCMD_FLS_MASK       (3u << 2) /* frame list size: 00 = 1024 */
#define USBCMD_PSE            (1u << 4) /* periodic schedule enable */
#define USBCMD_ASE            (1u << 5) /* asynchronous schedule enable */
#define USBCMD_IAAD           (1u << 6) /* interrupt on async advance doorbell */
#define USBCMD_ITC_1          (1u << 16)/* interrupt threshold: 1 micro-frame */
#define USBSTS_HSE            (1u << 4) /* host system error */
#define USBSTS_IAA            (1u << 5) /* interrupt on async advance (RW1C) */
#define USBSTS_HCHALTED       (1u << 12)
#define USBSTS_PSS            (1u << 14)/* periodic schedule status */
#define USBSTS_ASS            (1u << 15)/* asynchronous schedule status */
#define USBSTS_ALL            0x3Fu     /* every RW1C status bit */
#define CONFIGFLAG_CF         (1u << 0) /* route every port to this controller */

/* PORTSC (§2.3.9). */
#define PORTSC_CCS            (1u << 0) /* current connect status */
#define PORTSC_CSC            (1u << 1) /* connect status change (RW1C) */
#define PORTSC_PE             (1u << 2) /* port enabled (writing 0 disables) */
#define PORTSC_PEC            (1u << 3) /* RW1C */
#define PORTSC_OCC            (1u << 5) /* RW1C */
#define PORTSC_PR             (1u << 8) /* port reset */
#define PORTSC_LS(v)          (((v) >> 10) & 3)        /* line status */
#define PORTSC_LS_K           1         /* K-state: a low-speed device */
#define PORTSC_PP             (1u << 12)/* port power */
#define PORTSC_PO             (1u << 13)/* port owner: 1 = the companion */
#define PORTSC_RW1C           (PORTSC_CSC | PORTSC_PEC | PORTSC_OCC)

#define EHCI_FRAMES           1024      /* periodic frame list entries (FLS 00) */

/* Link pointers (§3.1): address | type | terminate. */
#define LINK_T                (1u << 0)
#define LINK_TYPE_QH          (1u << 1)

/* qTD token (§3.5.3). */
#define QTD_ACTIVE            (1u << 7)
#define QTD_HALTED            (1u << 6)
#define QTD_BUFFER_ERR        (1u << 5)
#define QTD_BABBLE            (1u << 4)
#define QTD_XACT_ERR          (1u << 3)
#define QTD_STATUS_MASK       0xFFu
#define QTD_PID(p)            ((uint32_t)(p) << 8)
#define PID_OUT               0
#define PID_IN                1
#define PID_SETUP             2
#define QTD_CERR(n)           ((uint32_t)(n) << 10)
#define QTD_IOC               (1u << 15)
#define QTD_BYTES(n)          ((uint32_t)(n) << 16)
#define QTD_GET_BYTES(t)      (((t) >> 16) & 0x7FFF)
#define QTD_TOGGLE            (1u << 31)
#define QTD_MAX_BYTES         0x5000    /* five 4 KiB pages */
#define QTD_PAGE              4096u

/* Queue head endpoint characteristics, dword 1 (§3.6.2). */
#define QH_ADDR(a)            ((uint32_t)(a) & 0x7F)
#define QH_ADDR_MASK          0x7Fu
#define QH_ENDPT(e)           ((uint32_t)(e) << 8)
#define QH_EPS(s)             ((uint32_t)(s) << 12)
#define EPS_FULL              0
#define EPS_LOW               1
#define EPS_HIGH              2
#define QH_DTC                (1u << 14)/* data toggle from the qTD */
#define QH_HEAD               (1u << 15)/* head of the reclamation list */
#define QH_MPS(m)             ((uint32_t)(m) << 16)
#define QH_MPS_MASK           (0x7FFu << 16)
#define QH_CTRL_EP            (1u << 27)/* a full/low-speed control endpoint */
#define QH_RL(n)              ((uint32_t)(n) << 28)     /* NAK count reload */
/* Queue head endpoint capabilities, dword 2 (§3.6.2). */
#define QH_SMASK(m)           ((uint32_t)(m))
#define QH_CMASK(m)           ((uint32_t)(m) << 8)
#define QH_HUB_ADDR(a)        ((uint32_t)(a) << 16)
#define QH_PORT(p)            ((uint32_t)(p) << 23)
#define QH_MULT(n)            ((uint32_t)(n) << 30)

/* A queue element transfer descriptor (§3.5), with the 64-bit extended
 * buffer pointers (Appendix B) that a controller with 64-bit addressing
 * reads; 32-byte aligned. */
struct ehci_qtd {
    uint32_t next;                    /* next qTD pointer */
    uint32_t alt_next;                /* alternate next qTD pointer */
    uint32_t token;
    uint32_t buf[5];                  /* buffer pointers (page 0 with its offset) */
    uint32_t buf_hi[5];               /* extended buffer pointers (64-bit) */
    uint32_t pad[3];
};
_Static_assert(offsetof(struct ehci_qtd, token) == 8 && offsetof(struct ehci_qtd, buf) == 12 &&
                   offsetof(struct ehci_qtd, buf_hi) == 32 && sizeof(struct ehci_qtd) == 64,
               "qTD: next, alternate, token, 5 buffer pointers, 5 extended (§3.5, App. B)");

/* A queue head (§3.6): link, characteristics, capabilities, current qTD,
 * then the transfer overlay (a qTD's first 8 dwords + the extended
 * pointers); 32-byte aligned. */
struct ehci_qh {
    uint32_t link;                    /* horizontal link pointer */
    uint32_t info1;                   /* endpoint characteristics */
    uint32_t info2;                   /* endpoint capabilities */
    uint32_t current;                 /* current qTD pointer */
    uint32_t next;                    /* overlay: next qTD pointer */
    uint32_t alt_next;
    uint32_t token;
    uint32_t buf[5];
    uint32_t buf_hi[5];
    uint32_t pad[7];
};
_Static_assert(offsetof(struct ehci_qh, info1) == 4 && offsetof(struct ehci_qh, current) == 12 &&
                   offsetof(struct ehci_qh, next) == 16 && offsetof(struct ehci_qh, token) == 24 &&
                   offsetof(struct ehci_qh, buf) == 28 && offsetof(struct ehci_qh, buf_hi) == 48 &&
                   sizeof(struct ehci_qh) == 96,
               "QH: link, info1, info2, current, overlay (§3.6, App. B)");

#endif
