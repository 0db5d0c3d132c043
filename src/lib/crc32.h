/* crc32.h — CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, the one
 * zlib and Python's zlib.crc32 compute), incrementally:
 *     uint32_t c = crc32_update(0, a, na); c = crc32_update(c, b, nb);
 * equals zlib.crc32(a + b). crc32_update(0, "123456789", 9) == 0xCBF43926.
 * Nibble-table implementation: small (64 bytes) and fast enough for a
 * serial port. */
#ifndef LIB_CRC32_H
#define LIB_CRC32_H
#include <stddef.h>
#include <stdint.h>

uint32_t crc32_update(uint32_t crc, const void *data, size_t len);

#endif
