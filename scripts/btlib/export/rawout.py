"""Raw export: each CPU's ring as the kernel stored it.

The output directory gets one file per CPU of the dump, `cpuNN.bin`
(NN = dense CPU number, two digits or more), holding that CPU's surviving
records oldest first, each the exact 32-byte little-endian record:

    u64 tsc, u32 seq, u16 type, u8 cpu, u8 flags, u64 a0, u64 a1

A CPU with no events gets an empty file, so every CPU is accounted for.
"""

import os

RECORD_SIZE = 32


def raw_name(cpu):
    return f'cpu{cpu:02d}.bin'


def write_raw(tl, outdir, append=False):
    """Write one cpuNN.bin per CPU into existing directory `outdir` (append:
    after what a stream's earlier windows wrote)."""
    written = []
    for cpu in tl.dump.cpus:
        path = os.path.join(outdir, raw_name(cpu.cpu))
        with open(path, 'ab' if append else 'wb') as f:
            packed = cpu.packed()             # the compiled decoder's records, as they are
            f.write(packed if packed is not None else b''.join(ev.raw() for ev in cpu.events))
        written.append(path)
    return written
