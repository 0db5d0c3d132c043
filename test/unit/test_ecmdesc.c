/* test_ecmdesc.c — CDC ECM (and NCM) descriptors: QEMU usb-net's two configurations
 * (RNDIS first, then CDC Ethernet), a typical adapter's, and damaged ones. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "usb/class/ecmdesc.h"

/* QEMU usb-net, configuration index 0: RNDIS (value 2). */
/* clang-format off */
static const uint8_t rndis[] = {
    9, 2, 67, 0, 2, 2, 9, 0xC0, 0x32,
    9, 4, 0, 0, 1, 2, 2, 0xFF, 6,
    5, 0x24, 0x00, 0x10, 0x01,
    5, 0x24, 0x01, 0x00, 0x01,
    4, 0x24, 0x02, 0x00,
    5, 0x24, 0x06, 0x00, 0x01,
    7, 5, 0x81, 3, 16, 0, 32,
    9, 4, 1, 0, 2, 0x0A, 0, 0, 4,
    7, 5, 0x82, 2, 64, 0, 0,
    7, 5, 0x02, 2, 64, 0, 0,
};
/* clang-format on */
/* QEMU usb-net, configuration index 1: CDC Ethernet (value 1); the data
 * interface's alternate setting 0 has no endpoints, setting 1 the pair. */
/* clang-format off */
static const uint8_t cdc[] = {
    9, 2, 80, 0, 2, 1, 7, 0xC0, 0x32,
    9, 4, 0, 0, 1, 2, 6, 0, 5,
    5, 0x24, 0x00, 0x10, 0x01,
    5, 0x24, 0x06, 0x00, 0x01,
    13, 0x24, 0x0F, 3, 0, 0, 0, 0, 0xEA, 0x05, 0, 0, 0,
    7, 5, 0x81, 3, 16, 0, 32,
    9, 4, 1, 0, 0, 0x0A, 0, 0, 0,
    9, 4, 1, 1, 2, 0x0A, 0, 0, 4,
    7, 5, 0x82, 2, 64, 0, 0,
    7, 5, 0x02, 2, 64, 0, 0,
};
/* clang-format on */
/* A high-speed adapter whose data interface comes first, with the OUT
 * endpoint before IN, an IAD and a vendor descriptor in between. */
/* clang-format off */
static const uint8_t adapter[] = {
    9, 2, 0, 0, 2, 1, 0, 0x80, 0xFA,
    9, 4, 1, 0, 0, 0x0A, 0, 0, 0,
    9, 4, 1, 1, 2, 0x0A, 0, 0, 0,
    7, 5, 0x01, 2, 0x00, 0x02, 0,
    7, 5, 0x83, 2, 0x00, 0x02, 0,
    8, 0x0B, 0, 2, 2, 6, 0, 0,
    9, 4, 0, 0, 1, 2, 6, 0, 0,
    5, 0x24, 0x00, 0x20, 0x01,
    5, 0x24, 0x06, 0x00, 0x01,
    13, 0x24, 0x0F, 9, 0, 0, 0, 0, 0xEA, 0x05, 0, 0, 0,
    4, 0xFF, 1, 2,
    7, 5, 0x82, 3, 8, 0, 11,
};
/* clang-format on */

static void test_qemu(void)
{
    struct ecm_info e;
    const char *why = "";
    CHECK(!ecm_parse_config(rndis, sizeof rndis, &e, &why));
    CHECK(!strcmp(why, "RNDIS only (not driven here)"));
    CHECK(ecm_parse_config(cdc, sizeof cdc, &e, &why));
    CHECK_EQ(e.cfg_value, 1);
    CHECK_EQ(e.ctrl_if, 0);
    CHECK_EQ(e.data_if, 1);
    CHECK_EQ(e.data_alt, 1);
    CHECK_EQ(e.mac_string, 3);
    CHECK_EQ(e.max_segment, 1514);
    CHECK(e.has_notify);
    CHECK_EQ(e.notify.addr, 0x81);
    CHECK_EQ(e.notify.mps, 16);
    CHECK_EQ(e.bulk_in.addr, 0x82);
    CHECK_EQ(e.bulk_out.addr, 0x02);
    CHECK_EQ(e.bulk_in.mps, 64);
    CHECK_EQ(e.bulk_out.attr & 3, EP_ATTR_BULK);
}

static void test_adapter(void)
{
    uint8_t a[sizeof adapter];
    memcpy(a, adapter, sizeof a);
    a[2] = sizeof a;
    struct ecm_info e;
    const char *why = "";
    CHECK(ecm_parse_config(a, sizeof a, &e, &why));
    CHECK_EQ(e.data_if, 1);
    CHECK_EQ(e.data_alt, 1);
    CHECK_EQ(e.bulk_in.addr, 0x83);
    CHECK_EQ(e.bulk_out.addr, 0x01);
    CHECK_EQ(e.bulk_in.mps, 512);
    CHECK_EQ(e.notify.addr, 0x82);
    CHECK_EQ(e.mac_string, 9);
}

static void test_damaged(void)
{
    uint8_t c[sizeof cdc];
    struct ecm_info e;
    const char *why = "";
    /* Every truncation: never read past the end, never a wrong yes. */
    for (size_t n = 0; n < sizeof cdc; n++) {
        memcpy(c, cdc, n);
        bool ok = ecm_parse_config(c, n, &e, &why);
        CHECK(!ok || n >= sizeof cdc - 14);      /* whole once both bulk endpoints are in */
    }
    /* The Union names another data interface: no bulk pair there. */
    memcpy(c, cdc, sizeof c);
    c[27] = 5;
    CHECK(!ecm_parse_config(c, sizeof c, &e, &why));
    CHECK(!strcmp(why, "ECM/NCM data interface without a bulk IN/OUT pair"));
    /* No Ethernet Networking descriptor (its subtype changed). */
    memcpy(c, cdc, sizeof c);
    c[30] = 0x0E;
    CHECK(!ecm_parse_config(c, sizeof c, &e, &why));
    /* A zero-length descriptor inside: malformed, not a loop. */
    memcpy(c, cdc, sizeof c);
    c[18] = 0;
    CHECK(!ecm_parse_config(c, sizeof c, &e, &why));
    CHECK(!strcmp(why, "descriptor runs past the end"));
    /* NCM instead of ECM: the same descriptors, flagged. */
    memcpy(c, cdc, sizeof c);
    c[15] = CDC_SUBCLASS_NCM;
    CHECK(ecm_parse_config(c, sizeof c, &e, &why));
    CHECK(e.ncm);
    CHECK_EQ(e.bulk_in.addr, 0x82);
    CHECK(ecm_parse_config(cdc, sizeof cdc, &e, &why));
    CHECK(!e.ncm);
    /* A CDC-ACM serial port is not Ethernet. */
    memcpy(c, cdc, sizeof c);
    c[15] = 0x02;
    c[16] = 0x01;
    CHECK(!ecm_parse_config(c, sizeof c, &e, &why));
    CHECK(!strcmp(why, "a CDC-ACM serial function, not Ethernet"));
}

static void test_mac(void)
{
    /* "400102030405" in UTF-16LE. */
    uint8_t s[26] = { 26, 3 };
    const char *hexs = "4054000A34fF";
    for (int i = 0; i < 12; i++)
        s[2 + 2 * i] = (uint8_t)hexs[i];
    uint8_t mac[6];
    CHECK(ecm_parse_mac(s, sizeof s, mac));
    static const uint8_t want[6] = { 0x40, 0x54, 0x00, 0x0A, 0x34, 0xFF };
    CHECK(!memcmp(mac, want, 6));
    CHECK(!ecm_parse_mac(s, 25, mac));           /* short */
    s[2] = 'g';
    CHECK(!ecm_parse_mac(s, sizeof s, mac));     /* not hex */
    s[2] = '4';
    s[3] = 1;                                    /* not ASCII */
    CHECK(!ecm_parse_mac(s, sizeof s, mac));
    s[3] = 0;
    s[1] = 2;                                    /* not a string descriptor */
    CHECK(!ecm_parse_mac(s, sizeof s, mac));
}

/* The interrupt endpoint's NetworkConnection notification (ECM 1.2
 * §6.3.1): the link state; anything else leaves it alone. */
static void test_notify(void)
{
    const uint8_t down[8] = { 0xA1, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00 };
    const uint8_t up[8] = { 0xA1, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00 };
    const uint8_t speed[16] = { 0xA1, 0x2A, 0, 0, 1, 0, 8, 0 };   /* ConnectionSpeedChange */
    const uint8_t rndis[8] = { 0x01, 0, 0, 0, 0, 0, 0, 0 };       /* QEMU usb-net's, always */
    bool link = true;
    CHECK(ecm_notify_link(down, sizeof down, &link) && !link);
    CHECK(ecm_notify_link(up, sizeof up, &link) && link);
    CHECK(!ecm_notify_link(speed, sizeof speed, &link) && link);
    CHECK(!ecm_notify_link(rndis, sizeof rndis, &link) && link);
    CHECK(!ecm_notify_link(down, 7, &link) && link);               /* cut short */
}

int main(void)
{
    test_notify();
    test_qemu();
    test_adapter();
    test_damaged();
    test_mac();
    return check_summary("ecmdesc");
}
