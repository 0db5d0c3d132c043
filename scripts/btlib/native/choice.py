"""Whether this run uses the compiled core (libbtdecode.so) or the
pure-Python reference: decided once, here, for the whole process.

Every module with two paths (line decoding, the merge, pairs, stats, the
exporters' writers) asks compiled(); none decides for itself. The answer is
the first call's and does not change while the process runs:

- BT_PURE_PYTHON=1 in the environment: the reference path;
- else the library when it loads (a stale one raises native.AbiError rather
  than being passed over), the reference path when it is missing.

Tests that compare the two paths run decode twice (test_oracle) or patch
compiled() (test/host/oracle.py reference_path()).
"""

from __future__ import annotations

import os

from . import library

DISABLE_ENV = 'BT_PURE_PYTHON'

_choice: bool | None = None


def compiled() -> bool:
    """True when this run uses the compiled core (decided at the first call)."""
    global _choice
    if _choice is None:
        _choice = os.environ.get(DISABLE_ENV) != '1' and library.available()
    return _choice


def forget() -> None:
    """Decide again at the next compiled() (tests that change the
    environment or the library within one process)."""
    global _choice
    _choice = None
