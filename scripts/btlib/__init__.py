"""btlib: the host side of baretrace (Python 3 standard library only).

A package per role. Each role imports only the roles before it in ROLES
(test/host/test_btlib_layering.py checks the order, not only the absence
of circles); within a role, modules import each other freely but without
circles. The programs in scripts/ sit above them all.

util      small shared helpers: tables, progress lines, output files
native    libbtdecode.so through ctypes, and the one choice of compiled or
          pure-Python path for the whole run
dump      a log into dumps: the format's words, line decoding, the model
timeline  the merged timeline every exporter shares, and what is read off
          it: losses, BEGIN/END pairs, IPI flows, --stats
export    a timeline written as text, CSV, JSON, Perfetto, CTF or raw
report    workload results and the lab's table (scripts/report)
capture   bytes coming in: a serial line, a console watch, the network
          receiver, capture --export as the lines arrive
qemu      booting the ISO in QEMU: the command line, the version, a session
stick     USB stick images: block devices and the dump area's growth
"""

ROLES = ('util', 'native', 'dump', 'timeline', 'export', 'report', 'capture', 'qemu', 'stick')
