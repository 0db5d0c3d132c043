/* siphash.c — SipHash-2-4 (siphash.h), as the paper's reference code. */
#include "lib/siphash.h"

#define C_ROUNDS 2
#define D_ROUNDS 4

static uint64_t rotl(uint64_t x, unsigned b) { return x << b | x >> (64 - b); }

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void sipround(uint64_t v[4])
{
    v[0] += v[1];
    v[1] = rotl(v[1], 13);
    v[1] ^= v[0];
    v[0] = rotl(v[0], 32);
    v[2] += v[3];
    v[3] = rotl(v[3], 16);
    v[3] ^= v[2];
    v[0] += v[3];
    v[3] = rotl(v[3], 21);
    v[3] ^= v[0];
    v[2] += v[1];
    v[1] = rotl(v[1], 17);
    v[1] ^= v[2];
    v[2] = rotl(v[2], 32);
}

static void absorb(uint64_t v[4], uint64_t m)
{
    v[3] ^= m;
    for (unsigned i = 0; i < C_ROUNDS; i++)
        sipround(v);
    v[0] ^= m;
}

uint64_t siphash24(const uint8_t key[SIPHASH_KEY_LEN], const void *data, size_t len)
{
    const uint8_t *p = data;
    uint64_t k0 = le64(key), k1 = le64(key + 8);
    uint64_t v[4] = { k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull,
                      k0 ^ 0x6c7967656e657261ull, k1 ^ 0x7465646279746573ull };
    size_t whole = len - len % 8;
    for (size_t at = 0; at < whole; at += 8)
        absorb(v, le64(p + at));
    uint64_t last = (uint64_t)(len & 0xFF) << 56;
    for (size_t i = 0; i < len % 8; i++)
        last |= (uint64_t)p[whole + i] << (8 * i);
    absorb(v, last);
    v[2] ^= 0xFF;
    for (unsigned i = 0; i < D_ROUNDS; i++)
        sipround(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}
