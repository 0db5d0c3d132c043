"""The one native-versus-reference oracle of the host tests.

Every comparison of the compiled path (libbtdecode.so) with the pure-Python
reference goes through here: reference_path() switches the compiled path
off at its one decision (choice.compiled()), as BT_PURE_PYTHON=1 does
for a whole command; both() runs the same thing on each path;
packed_copy()/events_copy() give a dump in the form each path starts
from; decode_both() runs scripts/decode on both paths. test_oracle runs
decode on both paths for every fixture and format; test_compiled_paths,
test_kmerge, test_pairs, test_stats and test_json_native compare their
parts through these helpers.
"""

import contextlib
import dataclasses
import io
import os
import subprocess
import sys
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_decode_support import DECODE, REPO

sys.path.insert(0, os.path.join(REPO, 'scripts'))
from btlib.native import choice
from btlib.timeline.timeline import Timeline


@contextlib.contextmanager
def reference_path():
    """Inside, every two-path caller takes the pure-Python reference."""
    with mock.patch.object(choice, 'compiled', lambda: False):
        yield


def both(run):
    """(run() on the compiled path, run() on the reference path)."""
    native = run()
    with reference_path():
        return native, run()


def packed_copy(dump):
    """dump with every CPU's events as packed records (the compiled
    decoder's form), whatever form they had."""
    return dataclasses.replace(dump, cpus=[
        dataclasses.replace(c, events=None, records=b''.join(e.raw() for e in c.events))
        for c in dump.cpus])


def events_copy(dump):
    """dump with every CPU's events as Event objects (the reference's form)."""
    return dataclasses.replace(dump, cpus=[
        dataclasses.replace(c, events=list(c.events), records=None) for c in dump.cpus])


def exported(writer, dump, native=True, out=None):
    """writer(Timeline, out)'s output for dump: from the records in C
    (native) or from Event objects on the reference path."""
    out = io.StringIO(newline='') if out is None else out
    if native:
        writer(Timeline(packed_copy(dump)), out)
    else:
        with reference_path():
            writer(Timeline(events_copy(dump)), out)
    return out.getvalue()


def decode_both(*args, cwds=(None, None), timeout=300):
    """scripts/decode args run with the library and with BT_PURE_PYTHON=1,
    in cwds[0] and cwds[1] (relative -o paths land in each):
    (native, reference) CompletedProcess, bytes."""
    return tuple(subprocess.run([sys.executable, DECODE, *args], capture_output=True, cwd=cwd,
                                env=dict(os.environ, BT_PURE_PYTHON=pure), timeout=timeout)
                 for pure, cwd in zip(('0', '1'), cwds))


def assert_decode_agrees(test, *args, cwds=(None, None)):
    """decode_both(args) gives the same status, stdout and stderr."""
    native, python = decode_both(*args, cwds=cwds)
    test.assertEqual(native.returncode, python.returncode, native.stderr)
    test.assertEqual(native.stderr, python.stderr)
    test.assertEqual(native.stdout, python.stdout)
    return native
