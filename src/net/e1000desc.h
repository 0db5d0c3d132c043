/* e1000desc.h — the two descriptor formats of Intel's gigabit Ethernet
 * controllers, behind one interface for the driver (net/e1000.c):
 *
 * - legacy: 8254x, 8257x/82583, PCH LAN (8254x SDM §3.2.3, §3.3.3);
 * - advanced: 82576, 82580, I350, I210/I211 and I225/I226, one buffer per
 *   receive descriptor (SRRCTL.DESCTYPE 001b) and a data descriptor per
 *   frame sent (82576 datasheet §7.1.5, §7.2.2.3; I210 §7.1.4, §7.2.2.3).
 *
 * Both are 16 bytes; the hardware writes its completion ("write-back")
 * over the descriptor the driver wrote ("read" format). Pure: no
 * registers; the ring memory is shared with the device, so every access
 * is volatile. Host unit tested with the driver (test/unit/test_e1000.c). */
#ifndef NET_E1000DESC_H
#define NET_E1000DESC_H
#include <stdbool.h>
#include <stdint.h>

#define E1000DESC_BYTES 16            /* one descriptor of either format */

enum e1000desc_format { E1000DESC_LEGACY,
                        E1000DESC_ADVANCED };

/* Receive slot i of ring given to the hardware with the buffer at
 * physical address buf (its status cleared). */
void e1000desc_rx_give(enum e1000desc_format f, void *ring, unsigned i, uint64_t buf);
/* Whether the hardware has written receive slot i back (DD). Then *len is
 * the bytes in its buffer, *errors the write-back's error bits (0: none)
 * and *eop whether the frame ends here (else it goes on in the next). */
bool e1000desc_rx_done(enum e1000desc_format f, const void *ring, unsigned i, unsigned *len,
                       uint32_t *errors, bool *eop);
/* Transmit slot i of ring filled with one whole frame of len bytes at buf:
 * end of packet, the FCS inserted, status reported (RS). */
void e1000desc_tx_put(enum e1000desc_format f, void *ring, unsigned i, uint64_t buf,
                      unsigned len);
/* Whether the hardware has written transmit slot i back (DD). */
bool e1000desc_tx_done(enum e1000desc_format f, const void *ring, unsigned i);

#endif
