"""btlib: host-side library of baretrace (Python 3 standard library only).

model    the decoded dump: Dump, CpuInfo, Event, EventType
dumpfmt  parse_log(bytes) -> [Dump]: finds and decodes dumps in a serial log
Other modules (capture, exporters, QEMU helpers) build on these two.
"""
