/* hubdesc.h — what a hub says about itself and its ports, for USB 2.0
 * hubs (hub descriptor 0x29, USB 2.0 §11.23.2.1, port status §11.24.2.7)
 * and the SuperSpeed side of USB 3 hubs (descriptor 0x2A, USB 3.2
 * §10.15.2.1, port status §10.16.2.6), and where a device behind a hub
 * sits (its route string, xHCI §8.9). Pure: no hardware, host
 * unit-tested (test_hubdesc). */
#ifndef USB_CORE_HUBDESC_H
#define USB_CORE_HUBDESC_H
#include <stdbool.h>
#include <stdint.h>

#define USB_DESC_SS_HUB    0x2A      /* SuperSpeed hub descriptor */
#define HUB_DESC_MIN       7         /* both kinds: up to bPwrOn2PwrGood */
#define HUB_ROUTE_TIERS    5         /* hubs below a root port (route string nibbles) */
#define HUB_ROUTE_PORT_MAX 15        /* one nibble; ports beyond read 15 */

struct hub_desc {
    uint8_t ports;                   /* bNbrPorts */
    uint32_t power_good_us;           /* bPwrOn2PwrGood: 2 ms units */
};

/* Parse a hub descriptor of len bytes; superspeed: type 0x2A expected,
 * else 0x29. False, with *why, when it is short or of the other type. */
bool hub_parse_desc(const uint8_t *buf, unsigned len, bool superspeed, struct hub_desc *out,
                    const char **why);
/* wPortStatus | wPortChange << 16 (GET_STATUS of a port) -> the speed
 * (usb.h SPEED_*) of an enabled device on it, or 0 (nothing enabled).
 * A SuperSpeed hub's ports are all SuperSpeed (its low/full/high-speed
 * devices are on its USB 2 half, a separate hub). */
uint8_t hub_port_speed(uint32_t status, bool superspeed);
/* The route string of a device on `port` of a hub whose own route string
 * is parent_route and which sits `parent_depth` hubs below the root port
 * (0: on the root port). */
uint32_t hub_route(uint32_t parent_route, uint8_t parent_depth, uint8_t port);

/* Port status bits both kinds share (wPortStatus, wPortChange). */
#define PS_CONNECTION (1u << 0)
#define PS_ENABLE     (1u << 1)
#define PC_CONNECTION (1u << 16)
#define PC_RESET      (1u << 20)   /* C_PORT_RESET */

#endif
