/* test_hubdesc.c — hub descriptors of both kinds, port speeds and route
 * strings (usb/core/hubdesc.c). QEMU 7.2 has no USB 3 hub model, so the
 * SuperSpeed side of a USB 3 hub is checked here: its descriptor (type
 * 0x2A, USB 3.2 §10.15.2.1, as a 4-port USB 3 hub sends it), its port
 * status (§10.16.2.6) and the route strings of the devices behind it
 * (xHCI §8.9: one nibble per tier, the first tier in bits 3:0). */
#include <stdint.h>
#include "check.h"
#include "usb/core/hubdesc.h"
#include "usb/core/usb.h"

/* A 4-port USB 3 hub's SuperSpeed hub descriptor: bLength 12, 0x2A,
 * 4 ports, wHubCharacteristics 0x0009, bPwrOn2PwrGood 50 (100 ms),
 * bHubContrCurrent 0, bHubHdrDecLat 4, wHubDelay 0x0F00, DeviceRemovable 0. */
static const uint8_t ss_hub[] = { 12, 0x2A, 4, 0x09, 0x00, 50, 0, 4, 0x00, 0x0F, 0, 0 };
/* QEMU's usb-hub (USB 2.0): 8 ports, 0x29. */
static const uint8_t usb2_hub[] = { 10, 0x29, 8, 0x0A, 0x00, 1, 0, 0, 0xFF, 0xFF };

static void test_descriptors(void)
{
    struct hub_desc h = { 0 };
    const char *why = NULL;
    CHECK(hub_parse_desc(ss_hub, sizeof ss_hub, true, &h, &why));
    CHECK_EQ(h.ports, 4);
    CHECK_EQ(h.power_good_us, 100000);
    CHECK(hub_parse_desc(usb2_hub, sizeof usb2_hub, false, &h, &why));
    CHECK_EQ(h.ports, 8);
    CHECK_EQ(h.power_good_us, 2000);
    /* The wrong kind for the hub's speed, and short ones, are refused. */
    CHECK(!hub_parse_desc(usb2_hub, sizeof usb2_hub, true, &h, &why));
    CHECK(why != NULL);
    CHECK(!hub_parse_desc(ss_hub, sizeof ss_hub, false, &h, &why));
    CHECK(!hub_parse_desc(ss_hub, 6, true, &h, &why));
    static const uint8_t short_len[] = { 5, 0x2A, 4, 0, 0, 50, 0 };
    CHECK(!hub_parse_desc(short_len, sizeof short_len, true, &h, &why));
}

static void test_port_speed(void)
{
    /* USB 2.0 hub port: connection 0, enable 1, low 9, high 10. */
    CHECK_EQ(hub_port_speed(0x0103, false), SPEED_FULL);
    CHECK_EQ(hub_port_speed(0x0303, false), SPEED_LOW);
    CHECK_EQ(hub_port_speed(0x0503, false), SPEED_HIGH);
    CHECK_EQ(hub_port_speed(0x0101, false), 0);             /* connected, not enabled */
    /* SuperSpeed hub port after a reset: connected, enabled, link U0
     * (bits 8:5 = 0), PORT_POWER is bit 9 (not "low speed"), speed 0 =
     * 5 Gb/s; C_PORT_RESET (change bit 4). */
    uint32_t ss = 0x0203u | (1u << 4) << 16;
    CHECK_EQ(hub_port_speed(ss, true), SPEED_SUPER);
    CHECK_EQ(hub_port_speed(0x0201, true), 0);
    CHECK(ss & PC_RESET);
}

static void test_route_strings(void)
{
    /* A hub on a root port (depth 0): its port 3 -> route 0x3. */
    CHECK_EQ(hub_route(0, 0, 3), 0x3);
    /* Behind it, a hub on port 3, then port 2 of that, then port 12. */
    uint32_t r1 = hub_route(0, 0, 3), r2 = hub_route(r1, 1, 2), r3 = hub_route(r2, 2, 12);
    CHECK_EQ(r2, 0x23);
    CHECK_EQ(r3, 0xC23);
    /* Five tiers fill the 20 bits; a port above 15 reads 15. */
    uint32_t r = 0;
    for (uint8_t depth = 0; depth < 5; depth++)
        r = hub_route(r, depth, (uint8_t)(depth + 1));
    CHECK_EQ(r, 0x54321);
    CHECK_EQ(hub_route(0, 0, 20), 0xF);
    CHECK_EQ(hub_route(0x54321, 5, 1), 0x54321);             /* no sixth tier */
}

int main(void)
{
    test_descriptors();
    test_port_speed();
    test_route_strings();
    return check_summary("hubdesc");
}
