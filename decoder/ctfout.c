/* ctfout.c — CTF event records from records (ctfout.h). */
#include "decoder/ctfout.h"

/* v as `bytes` little-endian bytes at p (the host may be big-endian). */
static uint8_t *put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

void bt_ctf_events(const struct trace_event *ev, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t *p = out + i * BT_CTF_EVENT_SIZE;
        p = put_le(p, ev[i].tsc, 8);           /* event.header timestamp */
        p = put_le(p, ev[i].type, 2);          /* event.header id */
        p = put_le(p, ev[i].seq, 4);           /* event.context seq */
        p = put_le(p, ev[i].flags, 1);         /* event.context flags */
        p = put_le(p, ev[i].a0, 8);            /* the two fields */
        put_le(p, ev[i].a1, 8);
    }
}
