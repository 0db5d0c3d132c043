/* hubdesc.c — hub descriptors, port speeds and route strings (hubdesc.h). */
#include "usb/core/hubdesc.h"
#include "usb/core/desc.h"
#include "usb/core/usb.h"

#define POWER_GOOD_UNIT_US 2000
#define PS_LOW_SPEED       (1u << 9)    /* USB 2.0 hub port; SS: PORT_POWER */
#define PS_HIGH_SPEED      (1u << 10)   /* USB 2.0 hub port; SS: speed field */

bool hub_parse_desc(const uint8_t *buf, unsigned len, bool superspeed, struct hub_desc *out,
                    const char **why)
{
    if (len < HUB_DESC_MIN || buf[0] < HUB_DESC_MIN) {
        *why = "descriptor too short";
        return false;
    }
    if (buf[1] != (superspeed ? USB_DESC_SS_HUB : USB_DESC_HUB)) {
        *why = superspeed ? "not a SuperSpeed hub descriptor" : "not a hub descriptor";
        return false;
    }
    out->ports = buf[2];
    out->power_good_us = buf[5] * POWER_GOOD_UNIT_US;
    return true;
}

uint8_t hub_port_speed(uint32_t status, bool superspeed)
{
    if (!(status & PS_CONNECTION) || !(status & PS_ENABLE))
        return 0;
    if (superspeed)
        return SPEED_SUPER;
    return status & PS_LOW_SPEED ? SPEED_LOW : status & PS_HIGH_SPEED ? SPEED_HIGH
                                                                      : SPEED_FULL;
}

uint32_t hub_route(uint32_t parent_route, uint8_t parent_depth, uint8_t port)
{
    if (parent_depth >= HUB_ROUTE_TIERS)
        return parent_route;                       /* no nibble left: hub.c refuses these */
    uint32_t nibble = port > HUB_ROUTE_PORT_MAX ? HUB_ROUTE_PORT_MAX : port;
    return parent_route | nibble << (4 * parent_depth);
}
