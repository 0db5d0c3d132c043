#!/usr/bin/env python3
"""Lay src/ out by role: git mv every kernel file into the folder of its
role, and rewrite every #include and every path that names a moved file.

Issue 17 used it to give src/ its folders and move the host decoder out of
src/; issue 26 (the table below) to split the USB stack by role and bring
the measurement lab back to src/perf/. Each run is one commit.

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
# Issue 26: the USB stack by role. The core goes to usb/core/, each host
# controller gets a folder under usb/hc/ (with the helpers the controllers
# share in usb/hc/ itself), the class drivers go to usb/class/,
# and usb/ keeps only usbstack, the stack's one face to the kernel.
LAYOUT = {
    'usb/core': ['usb/usb', 'usb/hcd', 'usb/desc', 'usb/usbdev', 'usb/xfer', 'usb/roothub',
                 'usb/hub', 'usb/hubdesc', 'usb/hcsetup', 'usb/say', 'usb/usblock'],
    'usb/hc': ['usb/asynclist', 'usb/devaddr', 'usb/pipe'],
    'usb/hc/xhci': ['usb/xhci', 'usb/xhci_dev', 'usb/xhci_event', 'usb/xhci_hw',
                    'usb/xhci_port', 'usb/xhci_state', 'usb/xhci_xfer'],
    'usb/hc/ehci': ['usb/ehci', 'usb/ehci_hw', 'usb/ehci_port', 'usb/ehci_qh',
                    'usb/ehci_sched', 'usb/ehci_state'],
    'usb/hc/ohci': ['usb/ohci', 'usb/ohci_dev', 'usb/ohci_ed', 'usb/ohci_hw',
                    'usb/ohci_sched', 'usb/ohci_state'],
    'usb/hc/uhci': ['usb/uhci', 'usb/uhci_dev', 'usb/uhci_hw', 'usb/uhci_sched',
                    'usb/uhci_state', 'usb/uhci_td'],
    'usb/class': ['usb/hid', 'usb/hidmap', 'usb/msc', 'usb/bot', 'usb/scsi',
                  'usb/cdc_ecm', 'usb/ecmdesc', 'usb/ncm'],
}
# One name per role across the controllers: <hc>_dev is hcd.h's device and
# transfer operations (ehci_xfer played that part), and every file of a
# controller's folder carries the controller's prefix.
RENAMES = {
    'usb/ehci_xfer': 'usb/hc/ehci/ehci_dev',
    'usb/trb': 'usb/hc/xhci/xhci_trb',
    'usb/ctx': 'usb/hc/xhci/xhci_ctx',
}
# whole folders: old (relative to the root) -> new. Issue 26: the
# measurement lab is src/perf/ again, as the design card names it.
FOLDERS = {'src/lab': 'src/perf'}
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
        # Old logs keep the paths they were made with; this file keeps its table.
        if (not path.is_file() or name.startswith('test/fixtures/')
                or path == Path(__file__).resolve()):
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
