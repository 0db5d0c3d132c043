/* test_virtq.c — the split virtqueue's layout and the driver's side of it
 * (VIRTIO 1.1 §2.6), with this test playing the device. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "net/virtq.h"

/* The device's view: the three areas at the addresses the driver gives. */
static void device_use(struct virtq *q, uint16_t *dev_used, uint32_t id, uint32_t len)
{
    volatile struct virtq_used *u = (volatile struct virtq_used *)(uintptr_t)virtq_used_addr(q);
    u->ring[*dev_used % q->size].id = id;
    u->ring[*dev_used % q->size].len = len;
    (*dev_used)++;
    u->idx = *dev_used;
}

static void test_layout(void)
{
    /* §2.6: descriptor table 16*N, available ring 6+2*N, used ring 6+8*N
     * at a 4-byte boundary. */
    CHECK_EQ(virtq_bytes(128), 2048 + 262 + 2 + 6 + 8 * 128);
    CHECK_EQ(virtq_bytes(1), 16 + 8 + 6 + 8);      /* avail 8 bytes: used at 24 */
    uint16_t sizes[] = { 1, 2, 8, 128, 256 };
    for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint16_t n = sizes[k];
        uint8_t *mem = aligned_alloc(VIRTQ_ALIGN, (virtq_bytes(n) + VIRTQ_ALIGN - 1) & ~(size_t)(VIRTQ_ALIGN - 1));
        memset(mem, 0, virtq_bytes(n));
        struct virtq q;
        virtq_init(&q, n, mem);
        CHECK_EQ(virtq_desc_addr(&q), (uintptr_t)mem);
        CHECK_EQ(virtq_avail_addr(&q) - virtq_desc_addr(&q), 16u * n);
        CHECK_EQ(virtq_used_addr(&q) % 4, 0);
        CHECK(virtq_used_addr(&q) >= virtq_avail_addr(&q) + 6 + 2u * n);
        CHECK_EQ(virtq_used_addr(&q) + 6 + 8u * n, (uintptr_t)mem + virtq_bytes(n));
        CHECK_EQ(q.avail->flags, VIRTQ_AVAIL_F_NO_INTERRUPT);
        free(mem);
    }
}

static void test_offer_take(void)
{
    enum { N = 8 };
    uint8_t *mem = aligned_alloc(VIRTQ_ALIGN, VIRTQ_ALIGN);
    memset(mem, 0, VIRTQ_ALIGN);
    struct virtq q;
    virtq_init(&q, N, mem);
    virtq_set(&q, 3, 0x123456789ull, 2048, true);
    CHECK_EQ(q.desc[3].addr, 0x123456789ull);
    CHECK_EQ(q.desc[3].len, 2048);
    CHECK_EQ(q.desc[3].flags, VIRTQ_DESC_F_WRITE);
    virtq_set(&q, 3, 0x1000, 60, false);
    CHECK_EQ(q.desc[3].flags, 0);

    uint16_t id;
    uint32_t len;
    CHECK(!virtq_take(&q, &id, &len));
    uint16_t dev_used = 0;
    /* Three rounds over the ring, 16-bit indexes running on: ring slots
     * wrap at N, the indexes do not. */
    for (unsigned k = 0; k < 3 * N; k++) {
        virtq_offer(&q, (uint16_t)(k % N));
        CHECK_EQ(q.avail->idx, (uint16_t)(k + 1));
        CHECK_EQ(q.avail->ring[k % N], k % N);
        CHECK_EQ(virtq_in_flight(&q), 1);
        device_use(&q, &dev_used, k % N, 100 + k);
        CHECK(virtq_take(&q, &id, &len));
        CHECK_EQ(id, k % N);
        CHECK_EQ(len, 100 + k);
        CHECK(!virtq_take(&q, &id, &len));
        CHECK_EQ(virtq_in_flight(&q), 0);
    }
    /* Out of order completion: ids name the buffers. */
    virtq_offer(&q, 1);
    virtq_offer(&q, 2);
    device_use(&q, &dev_used, 2, 7);
    device_use(&q, &dev_used, 1, 9);
    CHECK(virtq_take(&q, &id, &len) && id == 2 && len == 7);
    CHECK(virtq_take(&q, &id, &len) && id == 1 && len == 9);
    /* A broken device's id out of range is taken, flagged, never indexed. */
    virtq_offer(&q, 0);
    device_use(&q, &dev_used, 999, 1500);
    CHECK(virtq_take(&q, &id, &len));
    CHECK_EQ(id, N);
    CHECK_EQ(len, 0);
    /* Index wrap at 65536. */
    q.avail_idx = q.used_seen = 0xFFFF;
    dev_used = 0xFFFF;
    virtq_offer(&q, 4);
    CHECK_EQ(q.avail->idx, 0);
    CHECK_EQ(virtq_in_flight(&q), 1);
    device_use(&q, &dev_used, 4, 60);
    CHECK(virtq_take(&q, &id, &len) && id == 4);
    CHECK_EQ(virtq_in_flight(&q), 0);
    /* The device's NO_NOTIFY flag. */
    CHECK(virtq_kick_wanted(&q));
    q.used->flags = VIRTQ_USED_F_NO_NOTIFY;
    CHECK(!virtq_kick_wanted(&q));
    free(mem);
}

int main(void)
{
    test_layout();
    test_offer_take();
    return check_summary("virtq");
}
