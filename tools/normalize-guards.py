#!/usr/bin/env python3
"""Give every C header the include guard its path names.

    tools/normalize-guards.py          rewrite the guards that differ
    tools/normalize-guards.py --check  change nothing; one line per header
                                       whose guard differs, exit 1 if any

The guard is the path the header is included by, upper case, every other
character an underscore: a kernel header is included relative to src/
(src/net/dumpnet.h: "net/dumpnet.h", NET_DUMPNET_H), every other header
relative to the repository's root (decoder/abi.h: DECODER_ABI_H,
test/unit/check.h: TEST_UNIT_CHECK_H). A header's guard is its first
directive, `#ifndef G` then `#define G`, and its last line `#endif`; a
header without that shape is reported, never guessed at. Deterministic
and idempotent: run it after a merge or a move (`make lint` runs --check).
"""
import argparse
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
# The folders whose headers `make lint` keeps (the kernel's, the decoder
# library's, the host tools', the benchmarks' and the unit tests').
FOLDERS = ("src", "decoder", "tools", "bench", "test/unit")
# Headers included relative to these folders rather than the root.
INCLUDE_ROOTS = ("src/",)


def guard_for(path):
    """The guard of the header at path (relative to the repository)."""
    for root in INCLUDE_ROOTS:
        if path.startswith(root):
            path = path[len(root):]
            break
    return re.sub(r"[^A-Za-z0-9]", "_", path).upper()


def headers():
    """Every header under FOLDERS, as paths relative to the repository."""
    found = []
    for folder in FOLDERS:
        for where, dirs, files in os.walk(os.path.join(REPO, folder)):
            dirs.sort()
            found += [os.path.relpath(os.path.join(where, f), REPO)
                      for f in files if f.endswith(".h")]
    return sorted(found)


COMMENT = re.compile(r"/\*.*?\*/", re.S)


def guard_lines(text):
    """(index of `#ifndef`, index of `#define`, index of `#endif`) of the
    guard in text's lines, or an error string."""
    lines = text.split("\n")
    # The first directive: skip the leading comment and blank lines.
    head = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    first = next((i for i, line in enumerate(head.split("\n"))
                  if line.strip()), None)
    if first is None or not re.match(r"#ifndef\s+\w+\s*$", lines[first]):
        return "its first directive is not `#ifndef GUARD`"
    name = lines[first].split()[1]
    if first + 1 >= len(lines) or \
            not re.match(rf"#define\s+{name}\s*$", lines[first + 1]):
        return f"`#ifndef {name}` is not followed by `#define {name}`"
    last = max(i for i, line in enumerate(lines) if line.strip())
    if not re.match(r"#endif\b", lines[last]):
        return "its last line is not `#endif`"
    return first, first + 1, last


def fix(path, check):
    """None when path's guard is right (or was made right), else a
    message."""
    full = os.path.join(REPO, path)
    with open(full) as f:
        text = f.read()
    where = guard_lines(text)
    if isinstance(where, str):
        return f"{path}: no include guard to normalise: {where}"
    ifndef, define, endif = where
    lines = text.split("\n")
    want = guard_for(path)
    new = list(lines)
    new[ifndef] = f"#ifndef {want}"
    new[define] = f"#define {want}"
    new[endif] = "#endif"
    if new == lines:
        return None
    if check:
        old = lines[ifndef].split()[1]
        return (f"{path}:{ifndef + 1}: include guard {old} should be {want} "
                "(tools/normalize-guards.py fixes it)")
    with open(full, "w") as f:
        f.write("\n".join(new))
    return None


def main(argv):
    ap = argparse.ArgumentParser(
        description="Set every C header's include guard from its path.")
    ap.add_argument("--check", action="store_true",
                    help="change nothing; report and exit 1 on any mismatch")
    args = ap.parse_args(argv)
    paths = headers()
    problems = [m for m in (fix(p, args.check) for p in paths) if m]
    seen = {}
    for p in paths:
        g = guard_for(p)
        if g in seen:
            problems.append(f"{p}: include guard {g} is also {seen[g]}'s")
        seen[g] = p
    for m in problems:
        print(m, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
