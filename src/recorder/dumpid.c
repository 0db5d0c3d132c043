/* dumpid.c — the per-boot nonce and a dump's CRC seed (see dumpid.h). */
#include "recorder/dumpid.h"
#include "arch/cpu.h"
#include "lib/crc32.h"

#define CPUID_FEATURES   1
#define CPUID_ECX_RDRAND (1u << 30)
#define RDRAND_RETRIES   10        /* SDM: "retry up to 10 times" */
#define TSC_SAMPLES      8

static uint64_t nonce;
static int made;
static uint32_t numbers;                  /* dump numbers handed out */

/* splitmix64's finaliser: every input bit reaches every output bit. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* RDRAND into *out; 0 when the CPU lacks it or gave no entropy. */
static int try_rdrand(uint64_t *out)
{
    if (!(cpuid(CPUID_FEATURES, 0).ecx & CPUID_ECX_RDRAND))
        return 0;
    for (int i = 0; i < RDRAND_RETRIES; i++) {
        uint64_t v;
        uint8_t ok;
        __asm__ volatile("rdrand %0; setc %1" : "=r"(v), "=qm"(ok)::"cc");
        if (ok) {
            *out = v;
            return 1;
        }
    }
    return 0;
}

/* Boot entropy without RDRAND: TSC values (the time since power-on, and
 * the jitter of CPUID, which traps under a hypervisor), the APIC ID of the
 * CPU asking and where its stack lies. */
static uint64_t from_tsc(void)
{
    uint64_t h = mix(rdtsc());
    h = mix(h ^ (cpuid(CPUID_FEATURES, 0).ebx >> 24));
    h = mix(h ^ (uint64_t)(uintptr_t)&h);
    for (int i = 0; i < TSC_SAMPLES; i++) {
        (void)cpuid(0, 0);
        h = mix(h ^ rdtsc());
    }
    return h;
}

uint64_t boot_nonce(void)
{
    if (!made) {
        uint64_t r;
        nonce = try_rdrand(&r) ? r ^ mix(rdtsc()) : from_tsc();
        made = 1;
    }
    return nonce;
}

uint32_t dump_id_seed(uint64_t nonce, uint32_t dump_no)
{
    uint8_t id[DUMP_ID_BYTES];
    for (int i = 0; i < 8; i++)
        id[i] = (uint8_t)(nonce >> (8 * i));
    for (int i = 0; i < 4; i++)
        id[8 + i] = (uint8_t)(dump_no >> (8 * i));
    return crc32_update(0, id, sizeof id);
}

uint64_t boot_random(void)
{
    uint64_t r;
    return try_rdrand(&r) ? r ^ mix(rdtsc()) : from_tsc();
}

uint32_t dump_id_next(void) { return __atomic_add_fetch(&numbers, 1, __ATOMIC_RELAXED); }
