#!/usr/bin/env python3
"""Lay src/ out by role (issue 17): git mv every kernel file into the folder
of its role, move the host decoder's C out of src/ (decoder/ -> decoder/),
and rewrite every #include and every path that names a moved file.

No logic changes: only file names and the text that names them. Run once
from the repository root on a clean tree; the commit it makes is listed in
.git-blame-ignore-revs (git blame --ignore-revs-file .git-blame-ignore-revs).

    tools/relayout.py [--dry-run]

The table below is the layout; docs/architecture.md explains each folder
and test/host/test_layering.py keeps its order.
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# folder -> the modules (a .c and its .h, or a lone .h/.def) it receives,
# named as they were: a path relative to src/ without its extension.
LAYOUT = {
    'arch': ['cpu', 'percpu', 'spinlock', 'gdt', 'idt', 'lapic'],
    'lib': ['format', 'kstring', 'median', 'kassert', 'bytes', 'trace/crc32'],
    'firmware': ['mb2', 'cmdline', 'acpi', 'madt'],
    'mm': ['mem', 'mmio'],
    'time': ['tsc', 'refclock', 'tscmath', 'uptime', 'timer', 'stats'],
    'cpus': ['smp', 'tsc_sync', 'cpuwatch'],
    'dev': ['pci', 'ioapic', 'pic', 'keyboard', 'scancode', 'inputpoll', 'blockdev',
            'parttable'],
    'console': ['serial', 'uartsel', 'uartpci', 'spcr', 'screen', 'fbdraw', 'font',
                'font8x16', 'status'],
    'recorder': ['trace/snapshot', 'trace/control', 'trace/dump', 'trace/encode',
                 'trace/predict', 'trace/dumpid', 'trace/dumparea', 'trace/dumpstick',
                 'trace/prevboot', 'trace/autodump', 'trace/table', 'trace/schema',
                 'trace/pairing', 'trace/workloads', 'exception'],
    '': ['trace/maskprompt'],            # src/ itself: the program and its keys
}
RENAMES = {'console': 'lib/kprintf'}    # console.c holds kprintf and the sinks
# whole folders: old (relative to the root) -> new
FOLDERS = {'src/perf': 'src/lab', 'src/host': 'decoder'}
EXTS = ('.c', '.h', '.def')


def git(*args):
    return subprocess.run(['git', *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def moves():
    """{old path: new path}, relative to the root, of every file that moves."""
    out = {}
    for folder, mods in LAYOUT.items():
        for mod in mods:
            for ext in EXTS:
                old = Path('src', mod + ext)
                if (ROOT / old).exists():
                    base = Path(mod).name
                    out[str(old)] = str(Path('src', folder, base + ext))
    for mod, new in RENAMES.items():
        for ext in EXTS:
            if (ROOT / 'src' / (mod + ext)).exists():
                out[f'src/{mod}{ext}'] = f'src/{new}{ext}'
    for old, new in FOLDERS.items():
        for f in sorted((ROOT / old).iterdir()):
            out[f'{old}/{f.name}'] = f'{new}/{f.name}'
    return out


def include_name(path):
    """How an #include names the file at `path` (the root's relative path):
    src/x/y.h -> x/y.h (-Isrc); decoder/y.h -> decoder/y.h (-I.)."""
    return path[len('src/'):] if path.startswith('src/') else path


def rewrite_includes(text, names):
    def sub(m):
        new = names.get(m.group(2))
        return m.group(1) + new + m.group(3) if new else m.group(0)
    return re.sub(r'(#\s*include\s+")([^"]+)(")', sub, text)


def rewrite_paths(text, table):
    """Whole paths (src/..., or a folder-qualified name such as recorder/dump.c
    as comments and docs write them) of moved files, and moved folders."""
    def sub(m):
        token = m.group(0)
        return table.get(token, token)
    keys = sorted(table, key=len, reverse=True)
    pattern = r'(?<![\w/.-])(?:' + '|'.join(re.escape(k) for k in keys) + r')(?![\w-])'
    return re.sub(pattern, sub, text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--dry-run', action='store_true', help='print the moves only')
    args = ap.parse_args()
    mv = moves()
    if args.dry_run:
        for old, new in mv.items():
            print(f'{old} -> {new}')
        return 0
    if git('status', '--porcelain').strip():
        sys.exit('relayout: the tree has uncommitted changes')
    # #include names: the old way of naming each file -> the new way.
    names = {}
    for old, new in mv.items():
        rel = old[len('src/'):] if old.startswith('src/') else old
        names[rel] = include_name(new)
    # Path mentions: whole paths, and folder-qualified names with src/ left off.
    paths = dict(mv)
    for old, new in mv.items():
        if old.startswith('src/') and '/' in old[len('src/'):]:
            short_new = new[len('src/'):] if new.startswith('src/') else new
            paths[old[len('src/'):]] = short_new
    for old, new in FOLDERS.items():
        paths[old + '/'] = new + '/'
    for old, new in mv.items():
        (ROOT / new).parent.mkdir(parents=True, exist_ok=True)
        git('mv', old, new)
    for name in git('ls-files').splitlines():
        path = ROOT / name
        if not path.is_file() or name.startswith('test/fixtures/'):
            continue
        try:
            text = path.read_text(encoding='utf-8')
        except UnicodeDecodeError:
            continue                     # pictures and other binaries
        new = text
        if name.endswith(EXTS):
            new = rewrite_includes(new, names)
        new = rewrite_paths(new, paths)
        if new != text:
            path.write_text(new, encoding='utf-8')
    return 0


if __name__ == '__main__':
    sys.exit(main())
