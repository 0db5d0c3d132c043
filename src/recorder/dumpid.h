/* dumpid.h — a dump's identity (docs/dump-format.md section 3): the boot's
 * nonce and the dump number, whose CRC seeds every line of the dump after
 * DUMP BEGIN, so a line of another dump or boot fails this dump's CRCs.
 *
 * The nonce: a 64-bit random number made once per boot.
 * RDRAND when CPUID.1:ECX.RDRAND says the CPU has it (retried, as the SDM
 * advises, when the carry flag reports no entropy yet); otherwise, or when
 * it keeps failing, a mix of the TSC (read around a few CPUIDs, whose
 * timing jitters), the APIC ID and the address of the stack. Not for
 * secrets: it only has to differ between boots. */
#ifndef RECORDER_DUMPID_H
#define RECORDER_DUMPID_H
#include <stdint.h>

#define DUMP_ID_BYTES 12         /* nonce (8) + dump number (4), little-endian */

/* The boot's nonce: made on the first call, the same value afterwards. */
uint64_t boot_nonce(void);
/* A fresh random value (RDRAND, else TSC jitter), independent of the
 * nonce: for secrets such as the network's session code (the nonce is
 * public, in every dump). */
uint64_t boot_random(void);

/* The CRC seed of a dump's lines: crc32 of its 12-byte id. Example:
 * nonce 0x0123456789ABCDEF, dump 1 -> crc32 of EF CD AB 89 67 45 23 01
 * 01 00 00 00. */
uint32_t dump_id_seed(uint64_t nonce, uint32_t dump_no);

/* The next dump number of this boot: 1, 2, ... shared by dumps and a
 * stream's parts, so that every id of a boot is unique (any CPU). */
uint32_t dump_id_next(void);

#endif
