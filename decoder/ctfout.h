/* ctfout.h — the CTF export's event records, straight from records.
 *
 * scripts/btlib/export_ctf.py lays out each event of a stream packet as
 * struct.Struct('<QHIBQQ'): tsc timestamp, u16 id, u32 seq, u8 flags,
 * then the two 64-bit fields, 31 bytes, little-endian and unaligned
 * (its metadata declares every type byte-aligned). bt_ctf_events()
 * writes exactly those bytes for ev[0..n), in order, so Python cuts
 * packets out of one buffer instead of packing each event itself. */
#ifndef HOST_CTFOUT_H
#define HOST_CTFOUT_H
#include <stddef.h>
#include <stdint.h>
#include "trace/event.h"

#define BT_CTF_EVENT_SIZE 31

/* Writes n * BT_CTF_EVENT_SIZE bytes to out. */
void bt_ctf_events(const struct trace_event *ev, size_t n, uint8_t *out);

#endif
