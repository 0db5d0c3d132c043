/* bootdev.h — how this kernel was booted: READY's boot=net|cd|usb|unknown.
 *
 * The rule (docs/console.md, READY's `boot` field), first match wins:
 *   1. a multiboot2 network tag (16): GRUB got its files by DHCP/TFTP: net;
 *   2. the module string the ISO's and the netboot tree's grub.cfg pass,
 *      "root=$root" (GRUB's root device): "tftp", "http" or "pxe" first:
 *      net; "cd", or "hd96" and up (BIOS drives 0xE0 on: how GRUB for
 *      BIOS names an El Torito CD): cd; other "hd": usb (the image
 *      written to a stick; also a disk, which GRUB cannot tell apart);
 *   3. otherwise (another loader, an older image): unknown.
 * Pure code: also built and tested on the host. */
#ifndef FIRMWARE_BOOTDEV_H
#define FIRMWARE_BOOTDEV_H
#include "firmware/mb2.h"

const char *bootdev_kind(const struct mb2_info *mb);
/* GRUB's root device as the module string gave it ("" when none). */
const char *bootdev_root(const struct mb2_info *mb);

#endif
