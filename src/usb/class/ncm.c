/* ncm.c — NTB16 blocks (CDC NCM 1.0 §3.2, §3.3). */
#include "usb/class/ncm.h"
#include "lib/bytes.h"
#include "lib/kstring.h"

#define NTH16_SIGNATURE 0x484D434Eu   /* "NCMH" */
#define NDP16_SIGNATURE 0x304D434Eu   /* "NCM0": datagrams without CRC */
#define NDP16_HEADER    8
#define NDP16_ENTRY     4
#define NDP_CHAIN_MAX   16
#define ETH_HEADER      14

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

bool ncm_parse_params(const uint8_t *b, unsigned len, struct ncm_params *p)
{
    if (len < NCM_PARAMS_LEN || le16(b) < NCM_PARAMS_LEN)
        return false;
    p->formats = le16(b + 2);
    p->in_max = le32(b + 4);
    p->out_max = le32(b + 16);
    p->out_divisor = le16(b + 20);
    p->out_remainder = le16(b + 22);
    p->out_align = le16(b + 24);
    return p->formats & NCM_FORMAT_NTB16;
}

static unsigned align_up(unsigned v, unsigned a)
{
    return a > 1 ? (v + a - 1) / a * a : v;
}

unsigned ncm_build(uint8_t *out, unsigned cap, uint16_t seq, const struct ncm_params *p,
                   const uint8_t *frame, unsigned len)
{
    unsigned ndp = align_up(NCM_NTH16_LEN, p->out_align < 4 ? 4 : p->out_align);
    unsigned div = p->out_divisor ? p->out_divisor : 1, dg = ndp + NCM_NDP16_MIN;
    dg += (p->out_remainder % div + div - dg % div) % div;   /* dg % div == remainder */
    unsigned block = dg + len;
    if (block > cap || (p->out_max && block > p->out_max) || block > 0xFFFF || ndp > 0xFFFF)
        return 0;
    memset(out, 0, dg);
    put_le32(out, NTH16_SIGNATURE);              /* NTH16 (§3.2.1) */
    put16(out + 4, NCM_NTH16_LEN);
    put16(out + 6, seq);
    put16(out + 8, block);
    put16(out + 10, ndp);
    put_le32(out + ndp, NDP16_SIGNATURE);        /* NDP16 (§3.3.1) */
    put16(out + ndp + 4, NCM_NDP16_MIN);
    put16(out + ndp + 8, dg);                    /* wNextNdpIndex 0; one entry; (0,0) ends */
    put16(out + ndp + 10, len);
    memcpy(out + dg, frame, len);
    return block;
}

/* Take the NDP16 at `at`; false when it is damaged. */
static bool take_ndp(struct ncm_reader *r, unsigned at)
{
    const uint8_t *b = r->ntb;
    if (++r->ndps > NDP_CHAIN_MAX || at < NCM_NTH16_LEN || at % 4 ||
        at + NDP16_HEADER > r->block || le32(b + at) != NDP16_SIGNATURE)
        return false;
    unsigned wlen = le16(b + at + 4);
    if (wlen < NCM_NDP16_MIN || wlen % 4 || at + wlen > r->block)
        return false;
    r->ndp = at;
    r->ndp_end = at + wlen;
    r->pos = at + NDP16_HEADER;
    return true;
}

bool ncm_open(struct ncm_reader *r, const uint8_t *ntb, unsigned len)
{
    *r = (struct ncm_reader){ .ntb = ntb };
    if (len < NCM_NTH16_LEN || le32(ntb) != NTH16_SIGNATURE || le16(ntb + 4) != NCM_NTH16_LEN)
        return false;
    r->block = le16(ntb + 8);
    if (!r->block)
        r->block = len;                          /* §3.2.1: 0, the transfer's length says */
    if (r->block < NCM_NTH16_LEN || r->block > len)
        return false;
    return take_ndp(r, le16(ntb + 10));
}

bool ncm_next(struct ncm_reader *r, const uint8_t **frame, unsigned *len)
{
    while (r->ndp_end) {
        if (r->pos + NDP16_ENTRY > r->ndp_end) {
            unsigned next = le16(r->ntb + r->ndp + 6);
            if (!next || !take_ndp(r, next))
                r->ndp_end = 0;
            continue;
        }
        unsigned idx = le16(r->ntb + r->pos), n = le16(r->ntb + r->pos + 2);
        r->pos += NDP16_ENTRY;
        if (!idx && !n) {
            r->pos = r->ndp_end;                 /* the terminator: on to the next NDP16 */
            continue;
        }
        if (idx < NCM_NTH16_LEN || n < ETH_HEADER || idx + n > r->block) {
            r->bad++;
            continue;
        }
        *frame = r->ntb + idx;
        *len = n;
        return true;
    }
    return false;
}
