/* smbios.c — SMBIOS entry points and structures (DMTF DSP0134 3.x, §5 and §7). */
#include "firmware/smbios.h"
#include "lib/bytes.h"
#include "lib/kstring.h"

#define EP2_LEN_AT          0x05        /* entry point length */
#define EP2_MAJOR_AT        0x06
#define EP2_MINOR_AT        0x07
#define EP2_DMI_AT          0x10        /* "_DMI_", its own checksum over 15 bytes */
#define EP2_DMI_LEN         0x0F
#define EP2_TABLE_LEN_AT    0x16
#define EP2_TABLE_ADDR_AT   0x18
#define EP2_STRUCTS_AT      0x1C
#define EP3_LEN_AT          0x06
#define EP3_MAJOR_AT        0x07
#define EP3_MINOR_AT        0x08
#define EP3_TABLE_MAX_AT    0x0C
#define EP3_TABLE_ADDR_AT   0x10

#define HDR_LEN             4           /* type, length, handle */
#define TYPE_BIOS           0
#define TYPE_SYSTEM         1
#define TYPE_BOARD          2
#define TYPE_MEMORY_DEVICE  17
#define TYPE_END            127
#define MEMDEV_SIZE_AT      0x0C        /* u16: 0 none, 0xFFFF unknown, bit 15: KiB */
#define MEMDEV_EXT_SIZE_AT  0x1C        /* u32 MiB, when the size is 0x7FFF (2.7+) */
#define MEMDEV_SIZE_KIB     0x8000u
#define MEMDEV_SIZE_EXT     0x7FFFu
#define MEMDEV_SIZE_UNKNOWN 0xFFFFu

static uint8_t sum(const uint8_t *p, size_t n)
{
    uint8_t s = 0;
    while (n--)
        s = (uint8_t)(s + *p++);
    return s;
}

static bool entry2(const uint8_t *p, size_t avail, struct smbios_entry *out, const char **why)
{
    uint8_t len = p[EP2_LEN_AT];
    if (len < SMBIOS_EP2_LEN || len > avail || sum(p, len)) {
        *why = "SMBIOS 2 entry point: bad length or checksum";
        return false;
    }
    if (memcmp(p + EP2_DMI_AT, "_DMI_", 5) || sum(p + EP2_DMI_AT, EP2_DMI_LEN)) {
        *why = "SMBIOS 2 entry point: bad _DMI_ part";
        return false;
    }
    out->major = p[EP2_MAJOR_AT];
    out->minor = p[EP2_MINOR_AT];
    out->table_len = le16(p + EP2_TABLE_LEN_AT);
    out->table_addr = le32(p + EP2_TABLE_ADDR_AT);
    out->structs = le16(p + EP2_STRUCTS_AT);
    return true;
}

static bool entry3(const uint8_t *p, size_t avail, struct smbios_entry *out, const char **why)
{
    uint8_t len = p[EP3_LEN_AT];
    if (len < SMBIOS_EP3_LEN || len > avail || sum(p, len)) {
        *why = "SMBIOS 3 entry point: bad length or checksum";
        return false;
    }
    out->major = p[EP3_MAJOR_AT];
    out->minor = p[EP3_MINOR_AT];
    out->table_len = le32(p + EP3_TABLE_MAX_AT);
    out->table_addr = le64(p + EP3_TABLE_ADDR_AT);
    out->structs = 0;
    return true;
}

bool smbios_entry_parse(const uint8_t *p, size_t avail, struct smbios_entry *out,
                        const char **why)
{
    memset(out, 0, sizeof *out);
    if (avail >= SMBIOS_EP3_LEN && !memcmp(p, "_SM3_", 5))
        return entry3(p, avail, out, why);
    if (avail >= SMBIOS_EP2_LEN && !memcmp(p, "_SM_", 4))
        return entry2(p, avail, out, why);
    *why = "no SMBIOS anchor (_SM_ or _SM3_)";
    return false;
}

/* String number n (1-based) of the structure whose strings start at s,
 * copied to dst; "" for 0 or a number past its strings. */
static void copy_string(char *dst, const uint8_t *s, const uint8_t *end, uint8_t n)
{
    dst[0] = 0;
    for (uint8_t i = 1; n && s < end && *s; i++) {
        if (i == n) {
            size_t k = 0;
            for (; s < end && *s && k + 1 < SMBIOS_STR_MAX; s++)
                dst[k++] = *s >= 0x20 && *s < 0x7F ? (char)*s : '?';
            dst[k] = 0;
            return;
        }
        while (s < end && *s)
            s++;
        s++;
    }
}

/* The end of the string set at s: after its double NUL (or `end`). */
static const uint8_t *strings_end(const uint8_t *s, const uint8_t *end)
{
    if (s + 1 < end && !s[0] && !s[1])
        return s + 2;                   /* no strings */
    while (s + 1 < end && (s[0] || s[1]))
        s++;
    return s + 2 <= end ? s + 2 : NULL;
}

static uint64_t memdev_mb(const uint8_t *h, uint8_t len)
{
    if (len < MEMDEV_SIZE_AT + 2)
        return 0;
    uint16_t size = le16(h + MEMDEV_SIZE_AT);
    if (size == 0 || size == MEMDEV_SIZE_UNKNOWN)
        return 0;
    if (size == MEMDEV_SIZE_EXT && len >= MEMDEV_EXT_SIZE_AT + 4)
        return le32(h + MEMDEV_EXT_SIZE_AT) & 0x7FFFFFFFu;
    if (size & MEMDEV_SIZE_KIB)
        return (size & 0x7FFFu) / 1024;
    return size;
}

/* Field `at` of a structure of `len` bytes: its string number (0 when absent). */
static uint8_t str_at(const uint8_t *h, uint8_t len, uint8_t at)
{
    return at < len ? h[at] : 0;
}

static void take(const uint8_t *h, uint8_t len, const uint8_t *s, const uint8_t *end,
                 struct smbios_ident *out)
{
    switch (h[0]) {
    case TYPE_BIOS:                     /* vendor 4, version 5, release date 8 */
        copy_string(out->bios_vendor, s, end, str_at(h, len, 4));
        copy_string(out->bios_version, s, end, str_at(h, len, 5));
        copy_string(out->bios_date, s, end, str_at(h, len, 8));
        break;
    case TYPE_SYSTEM:                   /* manufacturer 4, product 5, version 6 (7: serial, not read) */
        copy_string(out->sys_vendor, s, end, str_at(h, len, 4));
        copy_string(out->sys_product, s, end, str_at(h, len, 5));
        copy_string(out->sys_version, s, end, str_at(h, len, 6));
        break;
    case TYPE_BOARD:                    /* manufacturer 4, product 5, version 6 (7: serial, not read) */
        copy_string(out->board_vendor, s, end, str_at(h, len, 4));
        copy_string(out->board_product, s, end, str_at(h, len, 5));
        copy_string(out->board_version, s, end, str_at(h, len, 6));
        break;
    case TYPE_MEMORY_DEVICE:
        out->memory_mb += memdev_mb(h, len);
        break;
    default:
        break;
    }
}

void smbios_table_parse(const uint8_t *t, size_t len, uint32_t max_structs,
                        struct smbios_ident *out)
{
    memset(out, 0, sizeof *out);
    const uint8_t *p = t, *end = t + len;
    uint32_t limit = max_structs ? max_structs : SMBIOS_MAX_STRUCTS;
    while (out->structs < limit && p + HDR_LEN <= end) {
        uint8_t slen = p[1];
        const uint8_t *strs = p + slen;
        const uint8_t *next = slen >= HDR_LEN && strs <= end ? strings_end(strs, end) : NULL;
        if (!next) {
            out->truncated = true;
            return;
        }
        out->structs++;
        if (p[0] == TYPE_END)
            return;
        take(p, slen, strs, next, out);
        p = next;
    }
}
