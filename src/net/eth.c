/* eth.c — Ethernet II headers (eth.h). */
#include "net/eth.h"
#include "lib/bytes.h"

#define ETH_TYPE_MIN 0x0600            /* below: an 802.3 length, not a type */

const uint8_t eth_broadcast[ETH_ALEN] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };

bool eth_parse(const uint8_t *frame, unsigned len, struct eth_view *v)
{
    if (len < ETH_HDR_LEN)
        return false;
    v->dst = frame;
    v->src = frame + ETH_ALEN;
    v->type = be16(frame + 2 * ETH_ALEN);
    v->payload = frame + ETH_HDR_LEN;
    v->len = len - ETH_HDR_LEN;
    return v->type >= ETH_TYPE_MIN;
}

void eth_put(uint8_t *frame, const uint8_t dst[ETH_ALEN], const uint8_t src[ETH_ALEN],
             uint16_t type)
{
    for (unsigned i = 0; i < ETH_ALEN; i++) {
        frame[i] = dst[i];
        frame[ETH_ALEN + i] = src[i];
    }
    put_be16(frame + 2 * ETH_ALEN, type);
}

bool eth_is_broadcast(const uint8_t mac[ETH_ALEN])
{
    for (unsigned i = 0; i < ETH_ALEN; i++)
        if (mac[i] != 0xFF)
            return false;
    return true;
}
