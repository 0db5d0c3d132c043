/* gen_stick — the real dump-area code (src/recorder/dumparea.c, parttable.c)
 * on files, for the build and the host tests:
 *
 *   gen_stick --format AREA SECTORS BUILD_ID
 *       a fresh dump area of SECTORS 512-byte sectors (the ISO appends it)
 *   gen_stick IMAGE BUILD_ID [--tear N] DUMP_TEXT...
 *       finds the dump area in IMAGE's MBR/GPT and writes each file as one
 *       dump, as the kernel does; --tear N lets only N writes of the last
 *       dump reach the disk (a reset mid-dump)
 * BUILD_ID is hexadecimal. Exit 1 with a message on any failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ramdisk.h"
#include "recorder/dumparea.h"

static int fail(const char *what, const char *detail)
{
    fprintf(stderr, "gen_stick: %s: %s\n", what, detail);
    return 1;
}

static int format(const char *path, const char *sectors, const char *id)
{
    uint64_t n = strtoull(sectors, NULL, 0);
    uint8_t s[DUMPAREA_SECTOR];
    if (n < DUMPAREA_MIN_SECTORS || n > DUMPAREA_MAX_SECTORS)
        return fail(sectors, "area size out of range");
    FILE *f = fopen(path, "wb");
    if (!f)
        return fail(path, "cannot create");
    dumparea_format(s, n, strtoull(id, NULL, 16));
    fwrite(s, 1, sizeof s, f);
    memset(s, 0, sizeof s);
    for (uint64_t i = 1; i < n; i++)
        fwrite(s, 1, sizeof s, f);
    return fclose(f) ? fail(path, "write failed") : 0;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    char *p = malloc(*len + 512);
    if (p && fread(p, 1, *len, f) != *len) {
        free(p);
        p = NULL;
    }
    fclose(f);
    return p;
}

static int part_read(void *ctx, uint64_t lba, uint32_t n, void *buf)
{
    struct blockdev *d = ctx;
    return d->read(d, lba, n, buf);
}

static int write_dumps(struct ramdisk *rd, uint64_t id, int tear, int n, char **files)
{
    static struct dumparea area;
    struct partition p;
    const char *why = NULL;
    if (part_find(part_read, &rd->dev, rd->dev.block_count, &dumparea_part_type, &p, &why) != 1)
        return fail("no dump area", why ? why : "read error");
    if (dumparea_attach(&area, &rd->dev, &p, id, &why))
        return fail("dump area refused", why ? why : "read error");
    for (int i = 0; i < n; i++) {
        size_t len;
        char *text = slurp(files[i], &len);
        if (!text)
            return fail(files[i], "cannot read");
        if (tear >= 0 && i == n - 1)
            rd->fail_after = rd->writes + (unsigned)tear;
        int err = dumparea_begin(&area);
        dumparea_write(&area, text, len);
        err = dumparea_end(&area) ? -1 : err;
        free(text);
        if (err && tear < 0)
            return fail(files[i], "write failed");
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "--format"))
        return format(argv[2], argv[3], argv[4]);
    if (argc < 3)
        return fail("usage", "gen_stick --format AREA SECTORS ID | IMAGE ID [--tear N] TEXT...");
    int tear = -1, first = 3;
    if (argc > 4 && !strcmp(argv[3], "--tear"))
        tear = atoi(argv[4]), first = 5;
    size_t len;
    uint8_t *img = (uint8_t *)slurp(argv[1], &len);
    if (!img || len % 512)
        return fail(argv[1], "cannot read, or not whole sectors");
    struct ramdisk rd;
    ramdisk_init(&rd, len / 512);
    free(rd.data);
    rd.data = img;
    int rc = write_dumps(&rd, strtoull(argv[2], NULL, 16), tear, argc - first, argv + first);
    FILE *f = fopen(argv[1], "r+b");
    if (!f || fwrite(img, 1, len, f) != len || fclose(f))
        return fail(argv[1], "cannot write back");
    free(img);
    return rc;
}
