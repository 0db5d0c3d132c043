#!/usr/bin/env python3
"""Run every baretrace test and print one closing line "N passed, N failed".

    test/run.py                 unit binaries, then test/boot and test/host
    test/run.py --boot -j 2     only the QEMU boot tests, two at a time
    test/run.py -k maxcpus      only tests whose name contains "maxcpus"

Order: the host unit test binaries build/unit/test_* (built by `make
unit`; each prints "name: N passed, N failed" and exits non-zero on
failure), then the Python tests in one queue: test/boot's (the long ones
first), then test/host's, which fill the slots the boots leave.
A test id collected twice (a TestCase class imported by name into a
second module is collected there too) is refused: it fails, naming both
modules, and runs once. The ten slowest tests are listed at the end, just
before the closing line.

Each phase runs -j things at once (default 2, the cores CI has): unit
binaries, then Python tests in worker processes (this script with
--worker), host tests one module per worker, boot tests one test per
worker. A worker that hangs is killed at its deadline and its
tests count as failed, so the runner itself never hangs. Output a test
prints is shown only when it fails. Exit status is non-zero iff anything
failed.
"""
import argparse
import concurrent.futures
import fnmatch
import glob
import inspect
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
UNIT_BIN_DIR = os.path.join(REPO, "build", "unit")
UNIT_SRC_DIR = os.path.join(REPO, "test", "unit")
HOST_DIR = os.path.join(REPO, "test", "host")
BOOT_DIR = os.path.join(REPO, "test", "boot")
SCRIPTS_DIR = os.path.join(REPO, "scripts")
PYCACHE_DIR = os.path.join(REPO, "build", "pycache")
TIMES_FILE = os.path.join(REPO, "build", "test-logs", "times.json")

# Boot tests are TCG guests: on 2 host cores two at a time finished the
# matrix fastest (see docs/running.md); more only adds contention.
DEFAULT_JOBS = 2
UNIT_TIMEOUT_S = 300
HOST_MODULE_TIMEOUT_S = 900
BOOT_TEST_TIMEOUT_S = 600
REAP_TIMEOUT_S = 30
DETAIL_TAIL_CHARS = 4000
SLOWEST_SHOWN = 10
RESULT_FD_ENV = "BT_RESULT_FD"


# ---------------------------------------------------------------- reporting
class Tally:
    """Counts results and prints each one as it arrives."""

    def __init__(self):
        self.counts = {"pass": 0, "fail": 0, "skip": 0}
        self.times = []             # (seconds, name) of every timed result

    def record(self, status, name, seconds=None, detail=""):
        self.counts[status] += 1
        if seconds is not None:
            self.times.append((seconds, name))
        label = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}[status]
        took = f" ({seconds:.1f} s)" if seconds is not None else ""
        print(f"{label} {name}{took}", flush=True)
        if detail and status != "pass":
            text = detail.rstrip()[-DETAIL_TAIL_CHARS:]
            print("    " + text.replace("\n", "\n    "), flush=True)

    def slowest(self, n=SLOWEST_SHOWN):
        """The n slowest results, slowest first, as printable lines."""
        worst = sorted(self.times, key=lambda t: -t[0])[:n]
        if not worst:
            return []
        return [f"the {len(worst)} slowest tests:"] + [
            f"  {seconds:7.1f} s  {name}" for seconds, name in worst]

    def summary(self):
        c = self.counts
        line = f"{c['pass']} passed, {c['fail']} failed"
        return line + (f", {c['skip']} skipped" if c["skip"] else "")


def selected(name, patterns):
    """unittest -k semantics: substring, or fnmatch when it has a '*'."""
    if not patterns:
        return True
    for p in patterns:
        if "*" in p and fnmatch.fnmatchcase(name, p):
            return True
        if "*" not in p and p in name:
            return True
    return False


# ----------------------------------------------------------- unit binaries
def run_units(tally, patterns, jobs):
    """Run build/unit/test_*, jobs at once; a test/unit/test_X.c without
    its binary is a failure (never silently skipped)."""
    sources = sorted(glob.glob(os.path.join(UNIT_SRC_DIR, "test_*.c")))
    names = [os.path.basename(s)[:-2] for s in sources]
    for path in sorted(glob.glob(os.path.join(UNIT_BIN_DIR, "test_*"))):
        name = os.path.basename(path)
        if os.access(path, os.X_OK) and "." not in name and name not in names:
            names.append(name)
    runnable = []
    for name in names:
        if not selected(f"unit.{name}", patterns):
            continue
        path = os.path.join(UNIT_BIN_DIR, name)
        if not os.access(path, os.X_OK):
            tally.record("fail", f"unit.{name}", None,
                         f"{path} not built (run `make unit`)")
            continue
        runnable.append((name, path))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for result in pool.map(lambda np: run_unit(*np), runnable):
            tally.record(*result)


def run_unit(name, path):
    """One unit binary: (status, label, seconds, detail) for the tally."""
    start = time.monotonic()
    try:
        res = subprocess.run([path], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=UNIT_TIMEOUT_S, cwd=REPO)
        out, code = res.stdout.decode("utf-8", "replace"), res.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        out += f"\ntimed out after {UNIT_TIMEOUT_S} s"
        code = None
    lines = out.strip().splitlines()
    counts = lines[-1] if lines and "passed" in lines[-1] else ""
    label = f"unit.{name}" + (f" [{counts}]" if counts else "")
    return ("pass" if code == 0 else "fail", label,
            time.monotonic() - start, out if code != 0 else "")


# ------------------------------------------------------------ python tests
def discover(directory, patterns):
    """(ids, broken): test ids under directory matching patterns, each
    once, and (name, message) for modules that failed to import and for
    test ids collected more than once."""
    loader = unittest.TestLoader()
    suite = loader.discover(directory, pattern="test_*.py",
                            top_level_dir=directory)
    ids, broken, seen = [], [], {}
    for test in iterate(suite):
        tid = test.id()
        if alone_reason(test):
            ALONE.add(tid)
        if tid.startswith("unittest.loader._FailedTest."):
            broken.append((tid.rsplit(".", 1)[-1], failed_test_text(test)))
        elif tid in seen:
            if seen[tid] == 1:
                broken.append((tid, collected_twice(test)))
            seen[tid] += 1
        elif selected(tid, patterns):
            seen[tid] = 1
            ids.append(tid)
        else:
            seen[tid] = 1
    return ids, broken


# Test ids marked to run with no other test beside them (alone_reason).
ALONE = set()


def alone_reason(test):
    """A boot test's `run_alone` mark (harness.run_alone), or None. Such a
    test boots many vCPUs that wait on each other (pair measurements):
    beside another boot on a 2-core host each pair waits for the host to
    run both of its vCPUs, and the test takes several times as long."""
    method = getattr(test, getattr(test, "_testMethodName", ""), None)
    return getattr(method, "run_alone", None)


def collected_twice(test):
    """Why a test id came twice: the modules that hold its class. The
    class's own module defines it; any other imported it by name, and
    unittest collects a TestCase class from every module that holds it."""
    cls = type(test)
    holders = sorted(name for name, mod in list(sys.modules.items())
                     if getattr(mod, cls.__name__, None) is cls)
    others = [name for name in holders if name != cls.__module__]
    return (f"test id collected twice: class {cls.__name__} is defined in "
            f"{cls.__module__} ({os.path.relpath(inspect.getsourcefile(cls), REPO)}) "
            "and imported "
            f"by name into {', '.join(others) or 'another module'}, which "
            "unittest collects again; import the module there and use "
            f"module.{cls.__name__} instead (the test runs once)")


def iterate(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from iterate(item)
        else:
            yield item


def failed_test_text(test):
    """The import error a _FailedTest carries."""
    result = unittest.TestResult()
    test.run(result)
    errors = result.errors + result.failures
    return errors[0][1] if errors else "could not be loaded"


def python_env(directory):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (directory, SCRIPTS_DIR, env.get("PYTHONPATH")) if p)
    # Bytecode cached under build/, not beside the sources: the tests start
    # the tools a few thousand times, and each start compiled btlib anew
    # when nothing was cached (about 0.5 s of CPU each).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = PYCACHE_DIR
    return env


class Worker:
    """One worker process running some test ids, reporting over a pipe."""

    def __init__(self, directory, ids, timeout):
        self.ids, self.timeout = ids, timeout
        self.reported = set()
        rfd, wfd = os.pipe()
        self.out = tempfile.TemporaryFile()
        env = python_env(directory)
        env[RESULT_FD_ENV] = str(wfd)
        self.proc = subprocess.Popen(
            [sys.executable, os.path.realpath(__file__), "--worker",
             directory] + ids, cwd=REPO, env=env, stdin=subprocess.DEVNULL,
            stdout=self.out, stderr=subprocess.STDOUT, pass_fds=(wfd,),
            start_new_session=True)
        os.close(wfd)
        self.pipe = os.fdopen(rfd, "rb")
        self.deadline = time.monotonic() + timeout
        self.started = time.monotonic()
        self.partial = b""

    def results(self):
        """Complete JSON result lines available now (non-blocking read
        after select said readable). Returns (results, eof)."""
        data = os.read(self.pipe.fileno(), 65536)
        if not data:
            return [], True
        self.partial += data
        *lines, self.partial = self.partial.split(b"\n")
        return [json.loads(line) for line in lines if line], False

    def output(self):
        self.out.seek(0)
        return self.out.read().decode("utf-8", "replace")

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def close(self):
        self.pipe.close()
        self.out.close()


def python_units(tally, directory, patterns, per_test, timeout):
    """Discover the tests in directory: [(directory, ids, timeout)], a
    unit per test (per_test) or per module, each run by one worker."""
    if not os.path.isdir(directory):
        return []
    sys.path.insert(0, directory)
    sys.path.insert(1, SCRIPTS_DIR)
    try:
        ids, broken = discover(directory, patterns)
    finally:
        del sys.path[:2]
    rel = os.path.relpath(directory, REPO)
    for name, text in broken:
        tally.record("fail", f"{rel}/{name}", None, text)
    took = last_times()
    if per_test:
        # Slowest first, so the last worker is not left running alone: by
        # the last run's times where there are some, else OVMF boots
        # (several times longer than SeaBIOS's) first.
        # Those that run alone go first, one after the other, then the
        # rest on every worker.
        ids.sort(key=lambda tid: (tid not in ALONE, -took.get(tid, 0.0),
                                  "uefi" not in tid.lower()))
        units = [[tid] for tid in ids]
    else:
        modules = {}
        for tid in ids:
            modules.setdefault(tid.split(".", 1)[0], []).append(tid)
        units = sorted(modules.values(),
                       key=lambda m: -sum(took.get(tid, 0.0) for tid in m))
    return [(directory, ids, timeout) for ids in units]


def last_times():
    """{test id: seconds} of the runs before this one (TIMES_FILE)."""
    try:
        with open(TIMES_FILE) as f:
            return {k: float(v) for k, v in json.load(f).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def keep_times(tally):
    """This run's times added to TIMES_FILE, for the next run's order."""
    took = last_times()
    took.update({name: round(seconds, 1) for seconds, name in tally.times})
    try:
        os.makedirs(os.path.dirname(TIMES_FILE), exist_ok=True)
        with open(TIMES_FILE + ".new", "w") as f:
            json.dump(took, f, indent=0, sort_keys=True)
        os.replace(TIMES_FILE + ".new", TIMES_FILE)
    except OSError as e:
        print(f"test/run.py: {TIMES_FILE} not written: {e}", file=sys.stderr)


def schedule(tally, units, jobs):
    """Run units on up to jobs workers, in order, printing results as
    they come."""
    sel = selectors.DefaultSelector()
    pending, running = list(units), []
    try:
        while pending or running:
            while pending and len(running) < jobs and not (
                    running and (alone(pending[0]) or any(alone(w) for w in running))):
                w = Worker(*pending.pop(0))
                sel.register(w.pipe, selectors.EVENT_READ, w)
                running.append(w)
            for key, _ in sel.select(timeout=0.5):
                w = key.data
                results, eof = w.results()
                for r in results:
                    w.reported.add(r["id"])
                    tally.record(r["status"], r["id"], r["seconds"],
                                 r["detail"])
                if eof:
                    sel.unregister(w.pipe)
                    finish(tally, w, None)
                    running.remove(w)
            for w in [w for w in running if time.monotonic() > w.deadline]:
                sel.unregister(w.pipe)
                w.kill()
                finish(tally, w, f"timed out after {w.timeout} s: killed")
                running.remove(w)
    finally:
        for w in running:
            w.kill()
            w.close()


def alone(unit):
    """Whether a unit (or a Worker's) is a test that runs alone."""
    ids = unit.ids if isinstance(unit, Worker) else unit[1]
    return any(tid in ALONE for tid in ids)


def finish(tally, w, why):
    """Reap a worker; its tests that never reported are failures."""
    if not why:
        try:
            w.proc.wait(REAP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            why = f"worker still alive {REAP_TIMEOUT_S} s after its last " \
                  "test: killed"
    w.kill()
    missing = [tid for tid in w.ids if tid not in w.reported]
    if missing:
        why = why or f"worker ended (status {w.proc.returncode}) " \
                     "before reporting"
        for tid in missing:
            tally.record("fail", tid, time.monotonic() - w.started,
                         f"{why}\n{w.output()}")
    w.close()


# ------------------------------------------------------------------ worker
class PipeResult(unittest.TestResult):
    """Worker side: one JSON line per finished test to the parent."""

    def __init__(self, stream):
        super().__init__()
        self.stream = stream
        self.t0 = {}
        self.sub_failures = {}  # test id -> failed subTest reports

    def startTest(self, test):
        super().startTest(test)
        self.t0[test.id()] = time.monotonic()

    def addSubTest(self, test, subtest, err):
        # unittest reports a failed subTest here and then never calls
        # addSuccess/addFailure for the test itself: collect them and
        # report the test once, in stopTest.
        super().addSubTest(test, subtest, err)
        if err is not None:
            text = self._exc_info_to_string(err, test)
            self.sub_failures.setdefault(test.id(), []).append(
                f"{subtest.id()}:\n{text}")

    def stopTest(self, test):
        failures = self.sub_failures.pop(test.id(), None)
        if failures:
            self.emit(test, "fail", "\n".join(failures))
        super().stopTest(test)

    def emit(self, test, status, detail=""):
        tid = test.id()
        took = time.monotonic() - self.t0.get(tid, time.monotonic())
        line = json.dumps({"id": tid, "status": status, "seconds": took,
                           "detail": detail})
        self.stream.write(line + "\n")
        self.stream.flush()

    def addSuccess(self, test):
        super().addSuccess(test)
        self.emit(test, "pass")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.emit(test, "fail", self.failures[-1][1])

    def addError(self, test, err):
        super().addError(test, err)
        self.emit(test, "fail", self.errors[-1][1])

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.emit(test, "skip", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.emit(test, "pass")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.emit(test, "fail", "unexpected success")


def worker(directory, ids):
    """Run ids in this process; results go to the inherited pipe."""
    sys.path.insert(0, directory)
    stream = os.fdopen(int(os.environ[RESULT_FD_ENV]), "w")
    suite = unittest.TestLoader().loadTestsFromNames(ids)
    result = PipeResult(stream)
    # A setUpClass error arrives as a pseudo-test: it is reported as a
    # failure under its own name, and the parent fails the tests it stopped.
    suite.run(result)
    stream.close()
    return 0


def qemu_line():
    """The QEMU the boot tests run on, and whether it has x2APIC."""
    sys.path.insert(0, SCRIPTS_DIR)
    try:
        from btlib.qemu import launch as qemu
    finally:
        del sys.path[0]
    found = qemu.version()
    if found is None:
        return f"QEMU: {qemu.QEMU_BIN} not found or gives no version"
    missing = qemu.x2apic_missing()
    return (f"QEMU: {qemu.QEMU_BIN} {found[2]}"
            + ("; x2APIC under TCG: yes" if missing is None
               else f"; x2APIC tests skipped: {missing}"))


# -------------------------------------------------------------------- main
def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Run baretrace's tests; the last line is "
        "'N passed, N failed'.")
    ap.add_argument("-k", dest="patterns", action="append", default=[],
                    help="only tests whose name contains PATTERN (or "
                    "matches it, with *); repeatable")
    ap.add_argument("--unit", action="store_true", help="unit binaries")
    ap.add_argument("--host", action="store_true", help="test/host")
    ap.add_argument("--boot", action="store_true", help="test/boot")
    ap.add_argument("-j", "--jobs", type=int, default=DEFAULT_JOBS,
                    help="unit binaries, host modules or boot tests at "
                    f"once (default {DEFAULT_JOBS})")
    ap.add_argument("--timeout", type=float, default=None,
                    help="deadline per worker in seconds (default "
                    f"{BOOT_TEST_TIMEOUT_S} per boot test, "
                    f"{HOST_MODULE_TIMEOUT_S} per host module)")
    ap.add_argument("--worker", nargs="+", metavar="ARG",
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("-j must be at least 1")
    if not (args.unit or args.host or args.boot):
        args.unit = args.host = args.boot = True
    return args


def main(argv):
    args = parse_args(argv)
    if args.worker:
        return worker(args.worker[0], args.worker[1:])
    tally = Tally()
    start = time.monotonic()
    try:
        if args.unit:
            run_units(tally, args.patterns, args.jobs)
        units = []
        if args.boot:
            print(qemu_line(), flush=True)
            units += python_units(tally, BOOT_DIR, args.patterns, True,
                                  args.timeout or BOOT_TEST_TIMEOUT_S)
        if args.host:
            # After the boots in one queue: the long boots start first and
            # the host modules, shorter, fill the slots the boots free, so
            # neither kind ends with one worker running alone.
            units += python_units(tally, HOST_DIR, args.patterns, False,
                                  args.timeout or HOST_MODULE_TIMEOUT_S)
        schedule(tally, units, args.jobs)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        print(tally.summary())
        return 130
    keep_times(tally)
    for line in tally.slowest():
        print(line)
    print(f"(took {time.monotonic() - start:.0f} s; boot logs in "
          "build/test-logs/)")
    print(tally.summary())
    return 1 if tally.counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
