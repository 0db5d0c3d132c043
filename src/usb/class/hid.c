/* hid.c — boot-protocol keyboard driver on an interrupt IN endpoint. */
#include "usb/class/hid.h"
#include "mm/mem.h"
#include "usb/class/hidmap.h"
#include "usb/core/say.h"
#include "usb/core/xfer.h"

#define HID_MAX_KBDS     8
#define KEYQ_SIZE        32          /* power of two */
#define REQ_SET_IDLE     0x0A
#define REQ_SET_PROTOCOL 0x0B
#define PROTOCOL_BOOT    0
#define MAX_ERRORS       8           /* failed reports in a row before giving up */
#define HID_REQ_OUT      (REQ_CLASS | REQ_IFACE)

struct kbd {
    struct usb_dev *dev;
    uint8_t dci;
    uint8_t errors;
    bool needs_reset;               /* endpoint halted: reset from hid_key_poll */
    bool dropped;
    struct hidmap_state map;
    uint8_t report[HID_REPORT_LEN] __attribute__((aligned(64)));
};

static struct kbd *kbds[HID_MAX_KBDS];
static unsigned n_kbds;
static struct hid_key keyq[KEYQ_SIZE];
static uint32_t keyq_head, keyq_tail;
static uint64_t keys_dropped;                /* arrived with the queue full */

static void queue_report(struct kbd *k)
{
    usb_queue(k->dev, k->dci, k->report, HID_REPORT_LEN);
}

/* Runs inside xhci_poll (maybe during another device's synchronous
 * wait): no commands here, only the ring and the key queue. */
static void on_transfer(struct usb_dev *d, uint8_t dci, uint8_t cc, uint32_t residual)
{
    struct kbd *k = d->drv;
    if (k->dev != d || dci != k->dci || k->dropped)
        return;                                /* an old device's late event */
    if (cc != CC_SUCCESS && cc != CC_SHORT_PACKET) {
        k->errors++;
        k->needs_reset = true;                 /* the endpoint halted */
        return;
    }
    k->errors = 0;
    struct hid_key keys[HID_KEYS];
    unsigned len = residual < HID_REPORT_LEN ? HID_REPORT_LEN - residual : 0;
    unsigned n = hidmap_report(&k->map, k->report, len, keys, HID_KEYS);
    for (unsigned i = 0; i < n; i++) {
        if (keyq_head - keyq_tail == KEYQ_SIZE) {
            keys_dropped += n - i;             /* counted where s shows it */
            break;
        }
        keyq[keyq_head++ % KEYQ_SIZE] = keys[i];
    }
    queue_report(k);
}

/* A keyboard record: a dropped one's (unplugged), or a new one. */
static struct kbd *free_entry(void)
{
    struct kbd *k = NULL;
    for (unsigned i = 0; i < n_kbds && !k; i++)
        if (kbds[i]->dropped)
            k = kbds[i];
    if (!k && n_kbds < HID_MAX_KBDS && (k = mem_alloc(sizeof *k, 64)))
        kbds[n_kbds++] = k;
    if (k)
        *k = (struct kbd){ .dropped = true };  /* until hid_attach succeeds */
    return k;
}

void hid_attach(struct usb_dev *d, const struct usb_cfg_info *cfg,
                const struct usb_if_info *iface)
{
    const struct usb_ep_info *ep = NULL;
    for (unsigned i = 0; i < iface->n_eps && !ep; i++)
        if ((iface->ep[i].attr & 3) == EP_ATTR_INTERRUPT && (iface->ep[i].addr & 0x80))
            ep = &iface->ep[i];
    struct kbd *k = ep ? free_entry() : NULL;
    if (!ep || !k) {
        usb_say(d, "keyboard %s; left alone", ep ? "limit reached" : "without an interrupt IN endpoint");
        return;
    }
    if (!usb_configure(d, cfg->value, ep, 1, 0))
        return;
    int cc = 0;
    if (usb_control(d, HID_REQ_OUT, REQ_SET_PROTOCOL, PROTOCOL_BOOT, iface->num, NULL, 0,
                    &cc) != USB_OK) {
        usb_say(d, "keyboard refuses the boot protocol (completion %d); left alone", cc);
        return;
    }
    usb_control(d, HID_REQ_OUT, REQ_SET_IDLE, 0, iface->num, NULL, 0, NULL);  /* may STALL */
    k->dev = d;
    k->dropped = false;
    k->dci = usb_ep_dci(ep->addr);
    d->drv = k;
    d->on_transfer = on_transfer;
    d->async_dcis = 1u << k->dci;
    queue_report(k);
    usb_say(d, "keyboard %04x:%04x (%s), keys are hotkeys", d->vendor, d->product,
            usb_speed_name(d->speed));
}

/* Recover keyboards whose endpoint halted, outside any command wait. */
static void recover(void)
{
    for (unsigned i = 0; i < n_kbds; i++) {
        struct kbd *k = kbds[i];
        if (k->dev && k->dev->dead && !k->dropped) {
            k->dropped = true;                 /* unplugged (usb_detach said so) */
            continue;
        }
        if (!k->needs_reset || k->dropped)
            continue;
        k->needs_reset = false;
        if (k->errors >= MAX_ERRORS || usb_ep_reset(k->dev, k->dci) != USB_OK ||
            k->dev->dead) {
            usb_say(k->dev, "keyboard keeps failing; dropped");
            k->dropped = true;
            continue;
        }
        queue_report(k);
    }
}

uint64_t hid_keys_dropped(void) { return keys_dropped; }

bool hid_key_waiting(void)
{
    return keyq_head != keyq_tail;
}

int hid_key_poll(uint8_t *usage, uint8_t *mods)
{
    if (keyq_head == keyq_tail)
        recover();
    if (keyq_head == keyq_tail)
        return -1;
    struct hid_key k = keyq[keyq_tail++ % KEYQ_SIZE];
    *usage = k.usage;
    *mods = k.mods;
    return (unsigned char)k.ascii;
}
