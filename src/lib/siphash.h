/* siphash.h — SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast
 * short-input PRF", 2012): a 64-bit keyed tag over a byte string, the
 * reference algorithm. The network protocol's host datagrams carry it
 * (net/netauth.h). Pure code, host-tested against the paper's vector. */
#ifndef LIB_SIPHASH_H
#define LIB_SIPHASH_H
#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_LEN 16

/* The paper's output as a number: its 8 output bytes read little-endian
 * (key 00..0f, message 00..0e gives 0xa129ca6149be45e5). */
uint64_t siphash24(const uint8_t key[SIPHASH_KEY_LEN], const void *data, size_t len);

#endif
