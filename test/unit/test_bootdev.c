/* test_bootdev.c — READY's boot= rule (firmware/bootdev.h). */
#include <string.h>
#include "check.h"
#include "firmware/bootdev.h"

static const char *kind(bool network, const char *module)
{
    static struct mb2_info mb;
    memset(&mb, 0, sizeof mb);
    mb.network = network;
    strncpy(mb.module_string, module, sizeof mb.module_string - 1);
    return bootdev_kind(&mb);
}

int main(void)
{
    CHECK(!strcmp(kind(true, ""), "net"));                   /* the network tag alone */
    CHECK(!strcmp(kind(true, "root=cd0"), "net"));           /* the tag wins */
    CHECK(!strcmp(kind(false, "root=tftp,10.0.2.2"), "net"));
    CHECK(!strcmp(kind(false, "root=(http,192.168.1.1)"), "net"));
    CHECK(!strcmp(kind(false, "root=pxe"), "net"));
    CHECK(!strcmp(kind(false, "root=cd0"), "cd"));           /* UEFI GRUB's CD */
    CHECK(!strcmp(kind(false, "root=hd96"), "cd"));          /* BIOS GRUB's El Torito, 0xE0 */
    CHECK(!strcmp(kind(false, "root=hd127"), "cd"));
    CHECK(!strcmp(kind(false, "root=hd0"), "usb"));
    CHECK(!strcmp(kind(false, "root=hd1,gpt2"), "usb"));
    CHECK(!strcmp(kind(false, "root=hd95"), "usb"));
    CHECK(!strcmp(kind(false, ""), "unknown"));              /* another loader */
    CHECK(!strcmp(kind(false, "some other module"), "unknown"));
    CHECK(!strcmp(kind(false, "root=fd0"), "unknown"));
    struct mb2_info mb;
    memset(&mb, 0, sizeof mb);
    strcpy(mb.module_string, "root=(cd0)");
    CHECK(!strcmp(bootdev_root(&mb), "cd0)"));
    return check_summary("test_bootdev");
}
