"""SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
2012), 64-bit output: the tag that proves capture --net knows a machine's
session code (docs/network-protocol.md).

tag(code, message) is the 16 lower-case hex digits the datagrams carry,
keyed by the 6 ASCII characters of the code and 10 zero bytes."""

MASK = (1 << 64) - 1
KEY_BYTES = 16


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & MASK


def _rounds(v, n):
    v0, v1, v2, v3 = v
    for _ in range(n):
        v0 = (v0 + v1) & MASK
        v1 = _rotl(v1, 13) ^ v0
        v0 = _rotl(v0, 32)
        v2 = (v2 + v3) & MASK
        v3 = _rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & MASK
        v3 = _rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & MASK
        v1 = _rotl(v1, 17) ^ v2
        v2 = _rotl(v2, 32)
    return [v0, v1, v2, v3]


def siphash24(key: bytes, message: bytes) -> int:
    """The reference SipHash-2-4 of message under a 16-byte key."""
    if len(key) != KEY_BYTES:
        raise ValueError(f'SipHash key is {KEY_BYTES} bytes, not {len(key)}')
    k0 = int.from_bytes(key[:8], 'little')
    k1 = int.from_bytes(key[8:], 'little')
    v = [k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d,
         k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573]
    tail = len(message) % 8
    whole = len(message) - tail
    for i in range(0, whole, 8):
        m = int.from_bytes(message[i:i + 8], 'little')
        v[3] ^= m
        v = _rounds(v, 2)
        v[0] ^= m
    m = int.from_bytes(message[whole:], 'little') | ((len(message) & 0xFF) << 56)
    v[3] ^= m
    v = _rounds(v, 2)
    v[0] ^= m
    v[2] ^= 0xFF
    v = _rounds(v, 4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def session_key(code: str) -> bytes:
    """The key of a session code: its ASCII characters, zero-padded to 16 bytes."""
    raw = code.encode('ascii')
    if len(raw) > KEY_BYTES:
        raise ValueError(f'session code {code!r} is longer than {KEY_BYTES} bytes')
    return raw + bytes(KEY_BYTES - len(raw))


def tag(code: str, message: bytes) -> str:
    """The tag a datagram carries: SipHash-2-4 under the code's key, 16 hex digits."""
    return f'{siphash24(session_key(code), message):016x}'
