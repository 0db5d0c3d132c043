"""dump: a baretrace log into dumps. model is the decoded form every tool
works on; dumpfmt the format's words (marks, CRCs, fields, the reference
line decoder); linedecode event lines into records (compiled or reference);
dumpbuild and dumplog a log's lines into Dump objects; dumparea the USB
stick's on-disk dump area; ready the kernel's READY line, found and read."""
