"""qemu: booting the ISO in QEMU the same way everywhere: the command line
and launch (launch), the installed version's abilities (version), one QEMU
and its COM1 as the tests, bench and capture drive it (session: start,
serial socket, keys, waiting for a line, stop), capture --qemu's options
(source), and bench's streaming boots (streamrun)."""
