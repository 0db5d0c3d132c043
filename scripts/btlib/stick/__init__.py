"""stick: USB stick images for scripts/mkusb: block devices (blockdev) and
growing the dump area (stickgrow)."""
