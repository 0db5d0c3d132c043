/* bootdev.c — boot=: the multiboot2 network tag, then GRUB's $root. */
#include "firmware/bootdev.h"
#include "lib/kstring.h"

#define ROOT_KEY      "root="
#define BIOS_CD_FIRST 96                /* BIOS drive 0xE0 on: El Torito CDs, as GRUB's hd96.. */

static bool starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

static unsigned hd_number(const char *s)
{
    unsigned n = 0;
    for (; *s >= '0' && *s <= '9' && n < 1000; s++)
        n = n * 10 + (unsigned)(*s - '0');
    return n;
}

const char *bootdev_root(const struct mb2_info *mb)
{
    const char *s = mb->module_string;
    while (*s == ' ')
        s++;
    if (!starts(s, ROOT_KEY))
        return "";
    s += strlen(ROOT_KEY);
    return *s == '(' ? s + 1 : s;       /* "(cd0)" or "cd0" */
}

const char *bootdev_kind(const struct mb2_info *mb)
{
    if (mb->network)
        return "net";
    const char *r = bootdev_root(mb);
    if (starts(r, "tftp") || starts(r, "http") || starts(r, "pxe"))
        return "net";
    if (starts(r, "cd"))
        return "cd";
    if (starts(r, "hd"))
        return hd_number(r + 2) >= BIOS_CD_FIRST ? "cd" : "usb";
    return "unknown";
}
