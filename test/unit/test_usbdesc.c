/* test_usbdesc.c — configuration descriptor parsing, on the descriptors
 * QEMU's usb-kbd, usb-hub and usb-storage return, and damaged ones. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "usb/core/desc.h"

/* usb-kbd: config, HID interface 3/1/1, HID descriptor, interrupt IN 0x81. */
/* clang-format off */
static const uint8_t kbd[] = {
    9, 2, 34, 0, 1, 1, 0, 0xA0, 50,
    9, 4, 0, 0, 1, 3, 1, 1, 0,
    9, 0x21, 0x11, 0x01, 0, 1, 0x22, 63, 0,
    7, 5, 0x81, 3, 8, 0, 7,
};
/* clang-format on */
/* usb-storage: MSC bulk-only, bulk IN 0x81 and OUT 0x02, 64 bytes. */
/* clang-format off */
static const uint8_t msc[] = {
    9, 2, 32, 0, 1, 1, 0, 0xC0, 50,
    9, 4, 0, 0, 2, 8, 6, 0x50, 0,
    7, 5, 0x81, 2, 64, 0, 0,
    7, 5, 0x02, 2, 64, 0, 0,
};
/* clang-format on */

static void test_keyboard(void)
{
    struct usb_cfg_info c;
    const char *why = NULL;
    CHECK(usb_parse_config(kbd, sizeof kbd, &c, &why));
    CHECK_EQ(c.value, 1);
    CHECK_EQ(c.n_ifs, 1);
    const struct usb_if_info *i = usb_find_if(&c, USB_CLASS_HID, 1, 1);
    CHECK(i != NULL);
    CHECK_EQ(i->n_eps, 1);
    CHECK_EQ(i->ep[0].addr, 0x81);
    CHECK_EQ(i->ep[0].attr & 3, EP_ATTR_INTERRUPT);
    CHECK_EQ(i->ep[0].mps, 8);
    CHECK_EQ(i->ep[0].interval, 7);
    CHECK_EQ(usb_ep_dci(0x81), 3);
    CHECK(usb_find_if(&c, USB_CLASS_HUB, -1, -1) == NULL);
}

static void test_storage(void)
{
    struct usb_cfg_info c;
    const char *why = NULL;
    CHECK(usb_parse_config(msc, sizeof msc, &c, &why));
    const struct usb_if_info *i = usb_find_if(&c, USB_CLASS_MSC, 6, 0x50);
    CHECK(i != NULL);
    CHECK_EQ(i->n_eps, 2);
    CHECK_EQ(usb_ep_dci(i->ep[0].addr), 3);
    CHECK_EQ(usb_ep_dci(i->ep[1].addr), 4);
    CHECK_EQ(i->ep[1].mps, 64);
}

static void test_damaged(void)
{
    struct usb_cfg_info c;
    const char *why = NULL;
    uint8_t b[sizeof kbd];
    CHECK(!usb_parse_config(kbd, 5, &c, &why));              /* cut header */
    memcpy(b, kbd, sizeof b);
    b[1] = 1;                                                /* not a config */
    CHECK(!usb_parse_config(b, sizeof b, &c, &why));
    memcpy(b, kbd, sizeof b);
    b[9] = 0;                                                /* zero length: no loop */
    CHECK(!usb_parse_config(b, sizeof b, &c, &why));
    CHECK(why != NULL);
    memcpy(b, kbd, sizeof b);
    b[27] = 40;                                              /* runs past the end */
    CHECK(!usb_parse_config(b, sizeof b, &c, &why));
    /* An endpoint before any interface, and an alternate setting: ignored. */
    /* clang-format off */
    static const uint8_t odd[] = {
        9, 2, 32, 0, 1, 1, 0, 0, 0,
        7, 5, 0x81, 3, 8, 0, 7,
        9, 4, 0, 1, 1, 3, 1, 1, 0,
        7, 5, 0x82, 3, 8, 0, 7,
    };
    /* clang-format on */
    CHECK(usb_parse_config(odd, sizeof odd, &c, &why));
    CHECK_EQ(c.n_ifs, 0);
}

int main(void)
{
    test_keyboard();
    test_storage();
    test_damaged();
    return check_summary("test_usbdesc");
}
