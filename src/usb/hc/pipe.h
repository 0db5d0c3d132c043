/* pipe.h — one endpoint as a USB 1.1 controller's descriptors name it
 * (UHCI TDs, OHCI EDs): the device's address, the endpoint number, its
 * speed and max packet. A low-speed pipe makes the controller send the
 * PRE preamble before each packet when the device sits behind a
 * full-speed hub (UHCI TD bit LS, OHCI ED bit S). */
#ifndef USB_HC_PIPE_H
#define USB_HC_PIPE_H
#include <stdbool.h>
#include <stdint.h>

struct usb_pipe {
    uint8_t addr;                   /* device address 0..127 */
    uint8_t endpoint;               /* 0..15 */
    bool low_speed;
    uint16_t mps;                    /* max packet size */
};

#endif
