/* virtq.h — one split virtqueue (Virtual I/O Device (VIRTIO) 1.1, §2.6):
 * the descriptor table, the driver (available) ring and the device (used)
 * ring in one block of memory, and the driver's side of handing buffers to
 * the device and taking them back.
 *
 * Each descriptor here stands alone (no chains): descriptor i always
 * describes the driver's buffer i, so a used element's id names the
 * buffer. Pure: no transport, host unit tested (test/unit/test_virtq.c).
 * Addresses are physical; the kernel's memory is identity-mapped. */
#ifndef NET_VIRTQ_H
#define NET_VIRTQ_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VIRTQ_MAX 256                 /* the largest queue this driver sets up */

/* §2.6.5: struct virtq_desc. */
struct virtq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};
_Static_assert(sizeof(struct virtq_desc) == 16, "virtq_desc is 16 bytes");

#define VIRTQ_DESC_F_NEXT          1
#define VIRTQ_DESC_F_WRITE         2       /* the device writes the buffer */
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1
#define VIRTQ_USED_F_NO_NOTIFY     1

/* §2.6.6: struct virtq_avail (flags, idx, ring[size], used_event). */
struct virtq_avail {
    uint16_t flags;
    uint16_t idx;
    uint16_t ring[];
};
_Static_assert(sizeof(struct virtq_avail) == 4, "virtq_avail header is 4 bytes");

/* §2.6.8: struct virtq_used_elem and virtq_used. */
struct virtq_used_elem {
    uint32_t id;
    uint32_t len;
};
_Static_assert(sizeof(struct virtq_used_elem) == 8, "virtq_used_elem is 8 bytes");

struct virtq_used {
    uint16_t flags;
    uint16_t idx;
    struct virtq_used_elem ring[];
};
_Static_assert(sizeof(struct virtq_used) == 4, "virtq_used header is 4 bytes");

struct virtq {
    uint16_t size;                    /* a power of two, 1..VIRTQ_MAX */
    volatile struct virtq_desc *desc;
    volatile struct virtq_avail *avail;
    volatile struct virtq_used *used;
    uint16_t avail_idx;               /* the next avail->idx the driver publishes */
    uint16_t used_seen;               /* used->idx up to which the driver has taken */
};

/* Bytes of zeroed, VIRTQ_ALIGN-aligned memory a queue of `size` needs. */
#define VIRTQ_ALIGN 4096
size_t virtq_bytes(uint16_t size);
/* Lay the queue out in mem (virtq_bytes(size) zeroed bytes): descriptor
 * table, then the available ring, then the used ring at a 4-byte
 * boundary (§2.6: alignments 16, 2 and 4). The device is told the three
 * addresses (virtq_desc_addr etc.). Tells the device not to interrupt. */
void virtq_init(struct virtq *q, uint16_t size, void *mem);
uint64_t virtq_desc_addr(const struct virtq *q);
uint64_t virtq_avail_addr(const struct virtq *q);
uint64_t virtq_used_addr(const struct virtq *q);

/* Describe buffer `id` (< size): len bytes at physical addr, written by
 * the device (receive) or read by it (send). */
void virtq_set(struct virtq *q, uint16_t id, uint64_t addr, uint32_t len, bool device_writes);
/* Offer descriptor `id` to the device: its entry in the available ring,
 * then (after a barrier) the new available index. The caller then
 * notifies the device where virtq_kick_wanted() says so. */
void virtq_offer(struct virtq *q, uint16_t id);
/* Whether the device asked to be notified (no VIRTQ_USED_F_NO_NOTIFY). */
bool virtq_kick_wanted(const struct virtq *q);
/* The next buffer the device has finished with: its id and the bytes it
 * wrote. False when there is none. A used id out of range (a broken
 * device) is taken but reported as len = 0 with *id = size. */
bool virtq_take(struct virtq *q, uint16_t *id, uint32_t *len);
/* Buffers offered and not yet taken back. */
uint16_t virtq_in_flight(const struct virtq *q);

#endif
