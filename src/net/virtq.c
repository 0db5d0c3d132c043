/* virtq.c — a split virtqueue, the driver's side (VIRTIO 1.1 §2.6). */
#include "net/virtq.h"
#include "arch/cpu.h"

#define DESC_ALIGN 16
#define USED_ALIGN 4

static size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

/* §2.6: the available ring is flags, idx, ring[size], used_event. */
static size_t avail_bytes(uint16_t size) { return 4 + 2u * size + 2; }
static size_t used_offset(uint16_t size)
{
    return align_up(sizeof(struct virtq_desc) * size + avail_bytes(size), USED_ALIGN);
}

size_t virtq_bytes(uint16_t size)
{
    /* flags, idx, ring[size], avail_event */
    return used_offset(size) + 4 + sizeof(struct virtq_used_elem) * size + 2;
}

void virtq_init(struct virtq *q, uint16_t size, void *mem)
{
    uint8_t *m = mem;
    q->size = size;
    q->desc = (volatile struct virtq_desc *)m;
    q->avail = (volatile struct virtq_avail *)(m + sizeof(struct virtq_desc) * size);
    q->used = (volatile struct virtq_used *)(m + used_offset(size));
    q->avail_idx = 0;
    q->used_seen = 0;
    q->avail->flags = VIRTQ_AVAIL_F_NO_INTERRUPT;   /* polled: §2.6.7 */
}

uint64_t virtq_desc_addr(const struct virtq *q) { return (uint64_t)(uintptr_t)q->desc; }
uint64_t virtq_avail_addr(const struct virtq *q) { return (uint64_t)(uintptr_t)q->avail; }
uint64_t virtq_used_addr(const struct virtq *q) { return (uint64_t)(uintptr_t)q->used; }

void virtq_set(struct virtq *q, uint16_t id, uint64_t addr, uint32_t len, bool device_writes)
{
    volatile struct virtq_desc *d = &q->desc[id];
    d->addr = addr;
    d->len = len;
    d->flags = device_writes ? VIRTQ_DESC_F_WRITE : 0;
    d->next = 0;
}

void virtq_offer(struct virtq *q, uint16_t id)
{
    q->avail->ring[q->avail_idx & (q->size - 1)] = id;
    barrier();            /* §2.6.13.2: the ring entry before the index (x86 keeps store order) */
    q->avail_idx++;
    q->avail->idx = q->avail_idx;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);   /* §2.6.13.4: idx visible before the notify check */
}

bool virtq_kick_wanted(const struct virtq *q)
{
    return !(q->used->flags & VIRTQ_USED_F_NO_NOTIFY);
}

bool virtq_take(struct virtq *q, uint16_t *id, uint32_t *len)
{
    if (q->used->idx == q->used_seen)
        return false;
    barrier();            /* the element after the index that published it */
    volatile struct virtq_used_elem *e = &q->used->ring[q->used_seen & (q->size - 1)];
    uint32_t i = e->id;
    *len = e->len;
    q->used_seen++;
    if (i >= q->size) {
        *id = q->size;
        *len = 0;
    } else {
        *id = (uint16_t)i;
    }
    return true;
}

uint16_t virtq_in_flight(const struct virtq *q)
{
    return (uint16_t)(q->avail_idx - q->used_seen);
}
