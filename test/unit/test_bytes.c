/* test_bytes.c — the byte-order readers and writers of bytes.h. */
#include "check.h"
#include "lib/bytes.h"

int main(void)
{
    /* Odd offsets: no alignment is assumed. */
    const uint8_t b[] = { 0xEE, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x88 };
    CHECK_EQ(le16(b + 1), 0x0201);
    CHECK_EQ(le32(b + 1), 0x04030201u);
    CHECK_EQ(le64(b + 1), 0x8807060504030201ull);
    CHECK_EQ(be32(b + 1), 0x01020304u);
    CHECK_EQ(le32(b + 5), 0x88070605u);       /* the top byte's bit 7 is no sign */
    CHECK_EQ(be32(b + 5), 0x05060788u);
    uint8_t out[5] = { 0 };
    put_le32(out + 1, 0xA1B2C3D4u);
    CHECK_EQ(out[1], 0xD4);
    CHECK_EQ(out[4], 0xA1);
    CHECK_EQ(le32(out + 1), 0xA1B2C3D4u);
    put_be32(out + 1, 0xA1B2C3D4u);
    CHECK_EQ(out[1], 0xA1);
    CHECK_EQ(out[4], 0xD4);
    CHECK_EQ(be32(out + 1), 0xA1B2C3D4u);
    CHECK_EQ(out[0], 0);                     /* nothing written outside */
    uint8_t q[10] = { 0 };
    put_le64(q + 1, 0x8877665544332211ull);
    CHECK_EQ(q[1], 0x11);
    CHECK_EQ(q[8], 0x88);
    CHECK_EQ(q[9], 0);
    CHECK_EQ(le64(q + 1), 0x8877665544332211ull);
    return check_summary("test_bytes");
}
