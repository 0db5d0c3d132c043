"""btlib: host-side library of baretrace (Python 3 standard library only).

Layers, each importing only those before it (test_btlib_layering):

interp      optional packages: re-run a script under make's python3 when
            the python3 on PATH lacks one (imports nothing of btlib)
model       the decoded dump: Dump, CpuInfo, Event, EventType
dumpfmt     the dump format's words: versions, line marks, CRCs, fields,
            the reference decoder of one event line
native      libbtdecode.so through ctypes: the one handle, its functions
            and structs in one table, checked against the library's own (abi.c)
fastdecode  the compiled decoder's operations (event lines, the merge,
            rows in C), and available(): whether they are used
dumpbuild, dumplog   a log into dumps: dumplog.parse_log(bytes) -> [Dump]
timeline    the merged timeline every exporter shares
losses, pairs, flows, stats, export_*, workloads ...   what the tools print
outfile     where outputs go: never onto an input, complete or not at all
exportfile  a timeline written in one of decode's formats (decode, capture)
liveexport  capture --export: a dump's lines parsed as they arrive, its
            export written the moment it is whole
"""
