/* ncm.h — CDC NCM 1.0 transfer blocks (NTB16) and parameters: building
 * a block around one frame to send, and taking the frames out of a
 * received block, whatever the device put in it. Pure: no hardware, host
 * unit tested with damaged and fuzzed blocks (test/unit/test_ncm.c). */
#ifndef USB_CLASS_NCM_H
#define USB_CLASS_NCM_H
#include <stdbool.h>
#include <stdint.h>

#define NCM_PARAMS_LEN   28         /* GET_NTB_PARAMETERS' answer (NCM 1.0 §6.2.1) */
#define NCM_FORMAT_NTB16 0x0001     /* bmNtbFormatsSupported bit 0 */
#define NCM_NTH16_LEN    12
#define NCM_NDP16_MIN    16         /* header and one entry and the terminator */

/* What the function said (§6.2.1 table 6-3), as the driver uses it. */
struct ncm_params {
    uint16_t formats;
    uint32_t in_max, out_max;         /* dwNtbInMaxSize, dwNtbOutMaxSize */
    uint16_t out_divisor, out_remainder, out_align;
};

/* Parse the 28-byte answer; false when short or without NTB16. */
bool ncm_parse_params(const uint8_t *b, unsigned len, struct ncm_params *p);
/* One NTB16 holding one frame: NTH16, then the NDP16 at the function's
 * alignment, then the frame at its divisor/remainder. Its length, or 0
 * when it would exceed cap or out_max. */
unsigned ncm_build(uint8_t *out, unsigned cap, uint16_t seq, const struct ncm_params *p,
                   const uint8_t *frame, unsigned len);

/* Walks the frames of one received NTB16. */
struct ncm_reader {
    const uint8_t *ntb;
    unsigned block;                   /* wBlockLength (checked against the bytes received) */
    unsigned ndp, ndp_end, pos;       /* the NDP16 being read and its next entry */
    unsigned ndps;                    /* NDP16s taken: a chain is bounded */
    unsigned bad;                     /* entries that pointed outside the block, or runts */
};

/* Check the NTH16 and the first NDP16; false when the block is damaged. */
bool ncm_open(struct ncm_reader *r, const uint8_t *ntb, unsigned len);
/* The next frame (pointer into the block, length); false when none is
 * left (a damaged NDP16 ends the walk; damaged entries are counted in
 * r->bad and skipped). */
bool ncm_next(struct ncm_reader *r, const uint8_t **frame, unsigned *len);

#endif
