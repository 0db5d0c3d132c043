"""qemu: booting the ISO in QEMU the same way everywhere: the command line
and launch (launch), the installed version's abilities (version), and QEMU
as capture's source (source)."""
