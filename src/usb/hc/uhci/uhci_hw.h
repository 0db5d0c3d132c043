/* uhci_hw.h — UHCI registers, frame list, transfer descriptor and queue
 * head layouts (Intel Universal Host Controller Interface Design Guide,
 * rev 1.1, chapters 2 and 3; the legacy support register from the
 * PIIX4 datasheet). Hardware constants only: the names follow the guide. */
#ifndef USB_HC_UHCI_UHCI_HW_H
#define USB_HC_UHCI_UHCI_HW_H
#include <stdint.h>

/* PCI configuration space (§2.1). */
#define UHCI_PCI_BAR       4          /* USBBASE: I/O space, 32 bytes */
#define UHCI_PCI_LEGSUP    0xC0       /* legacy support (16 bits) */
/* LEGSUP: bits 15 and 11:8 are status (write 1 to clear), 13 is
 * USBPIRQDEN, 7 and 5:0 enable the SMI and the port 60h/64h traps. */
#define LEGSUP_STATUS_RWC  0x8F00u
#define LEGSUP_SMI_TRAP_EN 0x00BFu
#define LEGSUP_PIRQ_EN     0x2000u

/* I/O registers (§2.1), offsets from USBBASE. */
#define UHCI_USBCMD        0x00       /* 16 bits */
#define UHCI_USBSTS        0x02       /* 16 bits, write 1 to clear */
#define UHCI_USBINTR       0x04       /* 16 bits */
#define UHCI_FRNUM         0x06       /* 16 bits */
#define UHCI_FRBASEADD     0x08       /* 32 bits, 4 KiB aligned */
#define UHCI_SOFMOD        0x0C       /* 8 bits */
#define UHCI_PORTSC(p)     (0x10 + 2 * ((p) - 1)) /* ports count from 1 */
#define UHCI_MAX_PORTS     7          /* PORTSC registers up to 0x1E */

#define UHCI_CMD_RUN       (1u << 0)  /* Run/Stop */
#define UHCI_CMD_HCRESET   (1u << 1)  /* host controller reset, self-clearing */
#define UHCI_CMD_GRESET    (1u << 2)  /* global reset: USB reset on every port */
#define UHCI_CMD_CF        (1u << 6)  /* configure flag (software only) */
#define UHCI_CMD_MAXP      (1u << 7)  /* 64-byte full-speed bandwidth reclamation */
#define GRESET_US          10000      /* hold GRESET at least 10 ms (§2.1.1) */

#define UHCI_STS_USBINT    (1u << 0)
#define UHCI_STS_ERROR     (1u << 1)  /* USB error interrupt */
#define UHCI_STS_RD        (1u << 2)  /* resume detect */
#define UHCI_STS_HSE       (1u << 3)  /* host system error (PCI) */
#define UHCI_STS_HCPE      (1u << 4)  /* host controller process error */
#define UHCI_STS_HCH       (1u << 5)  /* HCHalted */
#define UHCI_STS_ALL       0x3Fu

/* PORTSC (§2.1.7). CSC and PEDC are write 1 to clear. */
#define UHCI_PORT_CCS      (1u << 0)  /* current connect status */
#define UHCI_PORT_CSC      (1u << 1)  /* connect status change */
#define UHCI_PORT_PED      (1u << 2)  /* port enabled */
#define UHCI_PORT_PEDC     (1u << 3)  /* enable change */
#define UHCI_PORT_RD       (1u << 6)  /* resume detect */
#define UHCI_PORT_ALWAYS1  (1u << 7)  /* reserved, reads 1: a port exists */
#define UHCI_PORT_LSDA     (1u << 8)  /* low-speed device attached */
#define UHCI_PORT_PR       (1u << 9)  /* port reset */
#define UHCI_PORT_SUSP     (1u << 12)
#define UHCI_PORT_RWC      (UHCI_PORT_CSC | UHCI_PORT_PEDC)
#define UHCI_PORT_RESET_US 50000      /* TDRSTR, root port reset (USB 2.0 §7.1.7.5) */

/* Frame list (§3.1): 1024 pointers, 4 KiB aligned. Link pointers in
 * frame list entries, TDs and QHs share this format (§3.1, §3.2.1). */
#define UHCI_FRAMES        1024
#define UHCI_LINK_T        (1u << 0)  /* terminate: no pointer */
#define UHCI_LINK_QH       (1u << 1)  /* points at a queue head, else a TD */
#define UHCI_LINK_VF       (1u << 2)  /* TD link: depth first */
#define UHCI_LINK_PTR_MASK 0xFFFFFFF0u

/* Transfer descriptor (§3.2): four dwords the controller reads, 16-byte
 * aligned; the other four are the driver's (the guide's "reserved for
 * software" 16 bytes), so TDs tile a 32-byte stride. */
struct uhci_td {
    volatile uint32_t link;
    volatile uint32_t status;            /* TD control and status */
    volatile uint32_t token;
    volatile uint32_t buffer;
    uint32_t sw[4];
} __attribute__((aligned(16)));
_Static_assert(sizeof(struct uhci_td) == 32, "UHCI TD: 4 hardware dwords + 16 software bytes");

/* TD control and status (dword 1, §3.2.2). */
#define TD_ACTLEN(s)      (((s) + 1) & 0x7FFu) /* n-1 encoded; 0x7FF = 0 bytes */
#define TD_ACTLEN_NONE    0x7FFu
#define TD_ST_BITSTUFF    (1u << 17)
#define TD_ST_CRC_TIMEOUT (1u << 18)
#define TD_ST_NAK         (1u << 19)
#define TD_ST_BABBLE      (1u << 20)
#define TD_ST_DBUF        (1u << 21) /* data buffer error (over/underrun) */
#define TD_ST_STALLED     (1u << 22)
#define TD_ST_ACTIVE      (1u << 23)
#define TD_ST_ERRORS      (TD_ST_BITSTUFF | TD_ST_CRC_TIMEOUT | TD_ST_BABBLE | \
                      TD_ST_DBUF | TD_ST_STALLED)
#define TD_IOC             (1u << 24)
#define TD_LS              (1u << 26) /* low speed: the controller sends PRE first */
#define TD_CERR(n)         ((uint32_t)(n) << 27) /* errors before it gives up */
#define TD_CERR_OF(s)      (((s) >> 27) & 3u)
#define TD_SPD             (1u << 29) /* short packet detect */

/* TD token (dword 2, §3.2.3). */
#define UHCI_PID_SETUP     0x2Du
#define UHCI_PID_IN        0x69u
#define UHCI_PID_OUT       0xE1u
#define TOKEN_PID(t)       ((t) & 0xFFu)
#define TOKEN_ADDR(a)      ((uint32_t)(a) << 8)
#define TOKEN_ENDPT(e)     ((uint32_t)(e) << 15)
#define TOKEN_TOGGLE       (1u << 19)
#define TOKEN_MAXLEN(n)    ((uint32_t)(((n) - 1) & 0x7FF) << 21) /* 0 -> 0x7FF */
#define TOKEN_MAXLEN_OF(t) ((((t) >> 21) + 1) & 0x7FFu)
#define UHCI_MAX_PACKET    1023       /* MaxLen 0..0x4FF is 1..1280; full speed: 1023 */

/* Queue head (§3.3): two dwords the controller reads, 16-byte aligned. */
struct uhci_qh {
    volatile uint32_t head;              /* queue head link (horizontal) */
    volatile uint32_t element;           /* queue element link (vertical) */
    uint32_t sw[2];
} __attribute__((aligned(16)));
_Static_assert(sizeof(struct uhci_qh) == 16, "UHCI QH: 2 hardware dwords, 16-byte aligned");

#endif
