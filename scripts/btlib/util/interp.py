"""Optional packages under whichever python3 runs the scripts.

The scripts start with `#!/usr/bin/env python3`, which runs the first
python3 on PATH: under pyenv, conda or a venv that is not Debian's
/usr/bin/python3, the one `make` uses (GNUmakefile's PYTHON) and the one
`scripts/install-deps` installs packages for (python3-matplotlib).  A
script that needs such a package calls need() before it reads its input:

    interp.need('matplotlib', 'python3-matplotlib')

If the running interpreter has the module, nothing happens.  If it lacks
it but MAKE_PYTHON has it, the script is started again, unchanged, under
MAKE_PYTHON (BT_MAKE_PYTHON in the environment names another), once:
REEXEC_ENV guards against a loop.  Otherwise Missing
says which interpreters lack it and how to get it.
"""

import importlib.util
import os
import subprocess
import sys

MAKE_PYTHON = '/usr/bin/python3'        # GNUmakefile's PYTHON, where it exists
MAKE_PYTHON_ENV = 'BT_MAKE_PYTHON'      # names another one (tests, make PYTHON=...)
REEXEC_ENV = 'BT_REEXEC_PYTHON'         # set in the re-started script: never again


class Missing(RuntimeError):
    """The module is in neither interpreter: the message says what to do."""


def has(python, module):
    """Whether interpreter `python` can import `module` (a separate run)."""
    try:
        return subprocess.run([python, '-c', f'import {module}'], capture_output=True,
                              timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def make_python():
    return os.environ.get(MAKE_PYTHON_ENV) or MAKE_PYTHON


def _running():
    """The interpreter the user started (before any re-exec)."""
    return os.environ.get(REEXEC_ENV) or sys.executable or 'python3'


def need(module, package, what='this', python=None):
    """Make sure `module` can be imported: return, re-exec the script under
    `python` (default MAKE_PYTHON) when that has it, or raise Missing."""
    if importlib.util.find_spec(module) is not None:
        return
    other = python or make_python()
    here = sys.executable or 'python3'
    # A venv's python3 may be a link to the very same file: only running
    # it tells whether it has the module (has() in a separate process).
    if os.access(other, os.X_OK) and not os.environ.get(REEXEC_ENV) and has(other, module):
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(other, [other, os.path.abspath(sys.argv[0]), *sys.argv[1:]],
                  {**os.environ, REEXEC_ENV: here})
    raise Missing(missing_text(module, package, what, other))


def missing_text(module, package, what='this', python=None):
    """The one-line message for a module the running interpreter lacks."""
    other = python or make_python()
    here = _running()
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else 'the script'
    if here != other and os.access(other, os.X_OK):
        if has(other, module):
            return (f'{what} needs {module}, which {here} (the python3 on PATH) lacks and '
                    f'{other} has: run {other} {script} ...')
        return (f'{what} needs {module}, which neither {here} nor {other} has: '
                f'apt-get install {package} (for {other}), then run {other} {script} ...')
    return f'{what} needs {module}, which {here} lacks: apt-get install {package}'
