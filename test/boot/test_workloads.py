"""Measurement workloads end to end (src/perf/, docs/workloads.md).

Each test boots the ISO under TCG, starts workloads from the kernel command
line (what a GRUB menu entry passes) or with their hotkeys, dumps, decodes
the dump with btlib.dump.dumpfmt and reads the results back with
btlib.report.workloads / scripts/report, as a user would.

The stress test is the ring's reliability proof: every CPU traces flat out,
a fast timer interrupt traces inside those writes, and the test dumps
repeatedly while they run. Every stress event carries a checksum of its
own fields and a per-source attempt count: the test requires zero checksum
failures, seq contiguous within each ring except for what the counters
say was overwritten or excluded, recorded = decoded + overwritten +
excluded for every CPU of every dump, identical records for the same seq
in different dumps, and attempt counts that account for every attempt.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "scripts"))

from harness import Machine, run_alone
from btlib.dump import dumplog
from btlib.report import workloads
from btlib.report import stresscheck
from btlib.report import benchlines

PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
REPORT = os.path.join(REPO, "scripts", "report")
DUMP_END = rb"^DUMP END[^\r\n]*\r?\n"
DUMP_TIMEOUT_S = 90
WORKLOAD_TIMEOUT_S = 120
STRESS_SECS = 20
MIN_DUMPS_DURING = 2
# Results live in the rings until a dump: a ring big enough that the timer
# ticks of a slow (loaded, emulated) run cannot wrap over them first.
BIG_RINGS = "trace.events=65536"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def done_re(name):
    return rf"^workload: {name} run=(\d+) done[^\r\n]*\r?\n".encode()


class WorkloadCase(unittest.TestCase):

    def boot(self, **options):
        m = Machine(self.id(), **options)
        m.start()
        self.addCleanup(m.stop)
        return m, m.ready()

    def run_key(self, m, key, name):
        """Press a workload's key; wait until it says it is done."""
        start = len(m.output())
        m.send(key)
        m.wait_for(rf"^workload: {name} run=\d+ started".encode(), 30, start=start)
        return int(m.wait_for(done_re(name), WORKLOAD_TIMEOUT_S).group(1))

    def dump(self, m):
        """Press d, wait for the whole dump; return (dump, its bytes)."""
        start = len(m.output())
        m.send(b"d")
        m.wait_for(DUMP_END, DUMP_TIMEOUT_S, start=start)
        data = m.output()[start:]
        dumps = dumplog.parse_log(data)
        self.assertTrue(dumps and dumps[-1].complete,
                        f"dump incomplete: {dumps[-1].warnings if dumps else 'none'}")
        return dumps[-1], data

    def report(self, log_bytes, *args):
        """scripts/report on a log; returns its JSON."""
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "serial.log")
            with open(log, "wb") as f:
                f.write(log_bytes)
            out = os.path.join(tmp, "r.json")
            res = subprocess.run([PYTHON, REPORT, log, "--json", out, *args],
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(res.returncode, 0, res.stderr + res.stdout)
            with open(out) as f:
                return json.load(f), res.stdout

    def run_of(self, doc, name):
        found = [r for r in doc["runs"] if r["workload"] == name]
        self.assertTrue(found, f"no {name} run in the report: {[r['workload'] for r in doc['runs']]}")
        return found[-1]

    def picture(self, directory, doc, name):
        """Where scripts/report --png puts the picture of the newest run."""
        number = self.run_of(doc, name)["run"]
        return os.path.join(directory, f"{name}-run{number}.png" if number is not None
                            else f"{name}.png")

    def check_matrix(self, run, cpus, positive=True):
        ticks = run["ticks"]
        self.assertEqual(len(ticks), cpus)
        for r in range(cpus):
            for c in range(cpus):
                v = ticks[r][c]
                if r == c:
                    self.assertIsNone(v, f"diagonal cell [{r}][{c}]")
                    continue
                self.assertIsNotNone(v, f"cell [{r}][{c}] not measured")
                if positive:
                    self.assertGreater(v, 0, f"cell [{r}][{c}]")

    def no_faults(self, m):
        self.assertEqual(m.faults(), [], "fault text in the serial log")


class Matrices(WorkloadCase):
    """ipi, c2c and tsc from their hotkeys on 16 CPUs; the report renders them."""

    def test_results_survive_the_ring_wrapping(self):
        # Issue 21 item 1: a c2c run, then timer ticks wrap a small ring
        # many times over before d; the report still finds the matrix
        # (the results log, RESULT events) and says the rest was
        # overwritten, not lost.
        m, info = self.boot(smp=4, cmdline="trace.events=256 timer_hz=1000")
        self.run_key(m, b"3", "c2c")
        time.sleep(3)                            # ~3000 ticks a CPU: 10 laps of the ring
        d, data = self.dump(m)
        self.assertGreater(sum(c.overwritten for c in d.cpus), 4 * 2000)
        doc, _ = self.report(data, "--workload", "c2c")
        self.check_matrix(self.run_of(doc, "c2c"), 4)
        self.assertTrue(any(c.results for c in d.cpus), "the %C lines count results")
        self.no_faults(m)

    @run_alone("16 CPUs measure every pair: each pair needs both vCPUs running")
    def test_ipi_c2c_tsc_hotkeys_16cpu(self):
        # Default rings: the matrices live in the results log (RESULT
        # events), and a 16 x 4096 dump is a quarter of 16 x 65536's
        # serial time and decoding.
        m, info = self.boot(smp=16)
        cpus = int(info["cpus"])
        self.assertEqual(cpus, 16)
        for key, name in ((b"2", "ipi"), (b"3", "c2c"), (b"4", "tsc")):
            self.run_key(m, key, name)
        _, data = self.dump(m)
        with tempfile.TemporaryDirectory() as pngs:
            doc, text = self.report(data, "--png", pngs)
            for name in ("ipi", "c2c", "tsc"):
                with open(self.picture(pngs, doc, name), "rb") as f:
                    self.assertEqual(f.read(8), PNG_MAGIC, f"{name} picture")
        self.check_matrix(self.run_of(doc, "ipi"), cpus)
        c2c = self.run_of(doc, "c2c")
        self.check_matrix(c2c, cpus)
        self.assertEqual(c2c["ticks"], [list(r) for r in zip(*c2c["ticks"])], "c2c symmetric")
        tsc = self.run_of(doc, "tsc")
        self.check_matrix(tsc, cpus, positive=False)
        off = tsc["ticks"]
        for r in range(cpus):
            for c in range(r + 1, cpus):
                self.assertAlmostEqual(off[r][c], -off[c][r], delta=1,
                                       msg=f"tsc offsets antisymmetric at [{r}][{c}]")
        self.assertGreater(tsc["bound_ticks"], 0)
        self.assertIn("ipi run", text)
        self.no_faults(m)


class TimerAndHwlat(WorkloadCase):
    """timer and hwlat from their hotkeys on 16 CPUs: every CPU reports."""

    @run_alone("hwlat spins 16 vCPUs with interrupts off: beside another boot on 2 cores "
               "one of them may not run for seconds and is left out of the run")
    def test_timer_hwlat_hotkeys_16cpu(self):
        m, info = self.boot(smp=16, cmdline=BIG_RINGS)
        cpus = int(info["cpus"])
        self.run_key(m, b"5", "timer")
        self.run_key(m, b"1", "hwlat")
        self.assertRegex(m.text(), r"SMI counter: (yes|no), ")
        _, data = self.dump(m)
        with tempfile.TemporaryDirectory() as pngs:
            doc, _ = self.report(data, "--png", pngs)
            self.assertEqual(sorted(os.listdir(pngs)),
                             sorted(os.path.basename(self.picture(pngs, doc, n))
                                    for n in ("timer", "hwlat")))
        timer = self.run_of(doc, "timer")
        self.assertEqual([r["cpu"] for r in timer["cpus"]], list(range(cpus)))
        for r in timer["cpus"]:
            self.assertEqual(r["samples"] + r["missed"], 200, f"timer CPU {r['cpu']}")
            self.assertEqual(r["in_dump"], r["samples"], "every sample is a TIMER_WAKE event")
            self.assertLessEqual(r["min_ticks"], r["max_ticks"])
        self.assertEqual(sum(b["count"] for b in timer["histogram_us"]),
                         sum(r["samples"] for r in timer["cpus"]))
        hwlat = self.run_of(doc, "hwlat")
        self.assertEqual([r["cpu"] for r in hwlat["cpus"]], list(range(cpus)))
        hz = int(info["tsc_hz"])
        for r in hwlat["cpus"]:
            # 2 windows of at least 500 ms spun with interrupts off (a gap
            # that ends past the window's end extends it)
            self.assertGreaterEqual(r["spin_ticks"] / hz, 0.99, f"CPU {r['cpu']}")
            self.assertLessEqual(r["lost_ticks"], r["spin_ticks"])
            self.assertEqual(r["gaps"], r["gaps_in_dump"], "every gap is a HWLAT_GAP event")
        self.no_faults(m)


class FromCommandLine(WorkloadCase):
    """workload= on the command line, as a GRUB menu entry passes it."""

    @run_alone("a tsc matrix of 16 CPUs: each pair needs both vCPUs running")
    def test_tsc_from_cmdline_with_parameters(self):
        # A run on a loaded host can outlast the default ring: keep every result.
        m, info = self.boot(smp=16, cmdline=f"workload=tsc:rounds=20 {BIG_RINGS}")
        m.wait_for(rb"^workload: tsc run=1 started on 16 CPUs: rounds=20", 30, start=0)
        m.wait_for(done_re("tsc"), WORKLOAD_TIMEOUT_S, start=0)
        _, data = self.dump(m)
        doc, _ = self.report(data, "--workload", "tsc")
        self.check_matrix(self.run_of(doc, "tsc"), 16, positive=False)
        self.no_faults(m)

    def test_bad_name_and_parameter_are_reported(self):
        m, _ = self.boot(smp=2, cmdline="workload=nosuch")
        m.wait_for(rb"^workload: unknown workload 'nosuch' \(known: hwlat ipi c2c tsc timer "
                   rb"stress bench\); none started", 10, start=0)
        start = len(m.output())
        m.send(b"h")
        m.wait_for(rb"^workloads: 1 hwlat \| 2 ipi \| 3 c2c \| 4 tsc \| 5 timer \| 6 stress "
                   rb"\| 7 bench", 10, start=start)
        self.no_faults(m)

    def test_cpu_list_refusal_and_count_say_what_is_so(self):
        # cpus=5-2 is refused for what it is, not "wants CPU numbers below
        # 1024"; the start line counts the CPUs measured (two named twice
        # are two), not every CPU of the machine.
        m, _ = self.boot(smp=4, cmdline="workload=c2c:cpus=5-2,samples=2,trips=10")
        m.wait_for(rb"workload: c2c: cpus=5-2 has the range 5-2, which runs backwards "
                   rb"\(write 2-5\); using the default CPUs", 30, start=0)
        m.wait_for(rb"^workload: c2c run=1 started on 4 CPUs", 30, start=0)
        m.stop()
        m, _ = self.boot(smp=4, cmdline="workload=c2c:cpus=1,1,3,3,samples=2,trips=10")
        m.wait_for(rb"^workload: c2c run=1 started on 2 CPUs", 30, start=0)
        m.wait_for(done_re("c2c"), WORKLOAD_TIMEOUT_S, start=0)
        self.assertIn("c2c: 1 pairs to measure", m.text())

    def test_bench_table(self):
        m, _ = self.boot(smp=4, cmdline="workload=bench:n=2000,rounds=3")
        m.wait_for(rb"^BENCH END", WORKLOAD_TIMEOUT_S, start=0)
        tables = benchlines.bench_lines(m.output())
        self.assertEqual(len(tables), 1)
        t = tables[0]
        self.assertEqual(t["header"]["where"], "kernel")
        self.assertEqual(t["header"]["cpus"], "4")
        got = {(r["variant"], r["scope"]) for r in t["rows"]}
        variants = {"empty", "rdtsc", "trace_on", "trace_off", "spinlock", "strat9", "global",
                    "wide64"}
        self.assertEqual(got, {(v, s) for v in variants for s in ("1", "4")})
        for r in t["rows"]:
            self.assertGreater(float(r["ticks"]), 0, r)
        self.no_faults(m)


class Stress(WorkloadCase):
    """Repeated dumps while every CPU writes: zero torn or stale events."""

    def stress_totals(self, dump):
        """{cpu: (attempts, refused)} of the CPUs that finished (STRESS_CPU)."""
        sid = workloads.type_ids(dump)["STRESS_CPU"]
        return {e.cpu: (e.a0, e.a1) for c in dump.cpus for e in c.events if e.type == sid}

    def test_dumps_during_stress_are_exact(self):
        m, info = self.boot(smp=4, cmdline=f"workload=stress:secs={STRESS_SECS} "
                                           f"trace.events=1024")
        cpus = int(info["cpus"])
        m.wait_for(rb"^stress: every CPU traces flat out", 30, start=0)
        # Dump again and again until the run ends (how many fit depends on
        # how fast this host emulates the dump); a workload key meanwhile is
        # refused.
        dumps, during = [], 0
        deadline = time.monotonic() + STRESS_SECS + WORKLOAD_TIMEOUT_S
        while not re.search(done_re("stress"), m.output(), re.M):
            self.assertLess(time.monotonic(), deadline, "stress never finished")
            d = self.dump(m)[0]
            dumps.append(d)
            during += not self.stress_totals(d)
            if len(dumps) == 1:
                start = len(m.output())
                m.send(b"2")
                m.wait_for(rb"^workload: stress is running; ipi not started", 30, start=start)
        self.assertGreaterEqual(during, MIN_DUMPS_DURING,
                                "too few dumps while every CPU was still writing")
        final, _ = self.dump(m)
        dumps.append(final)

        check = stresscheck.verify_stress(dumps)
        self.assertTrue(check.ok(), check.as_dict())
        self.assertEqual(check.dumps, len(dumps))
        self.assertGreater(check.events, len(dumps) * cpus * 500, "too few stress events checked")
        self.assertGreater(check.pairs_checked, check.events // 2)
        ids = workloads.type_ids(final)
        nested = sum(1 for d in dumps for c in d.cpus for e in c.events
                     if e.type == ids["STRESS_IRQ"])
        self.assertGreater(nested, 0, "no event from the interrupt: nothing nested")

        for d in dumps:
            self.assertEqual(len(d.cpus), cpus)
            for c in d.cpus:
                self.assertEqual((c.damaged, c.unexplained), (0, 0), f"CPU {c.cpu}")
                self.assertEqual(c.recorded, len(c.events) + c.overwritten + c.excluded,
                                 f"dump {d.index} CPU {c.cpu}: missing != counters")
                skipped = sum(((b.seq - a.seq) & 0xFFFFFFFF) - 1
                              for a, b in zip(c.events, c.events[1:]))
                self.assertLessEqual(skipped, c.overwritten + c.excluded,
                                     f"dump {d.index} CPU {c.cpu}: unexplained seq gap")
        # The dumps really were taken while the CPUs wrote: every ring grew
        # between the last two dumps of the run. The rings counted every
        # refusal the workload saw. Whether any attempt falls inside a
        # pause at all is the host scheduler's choice (under TCG on a busy
        # host a vCPU can sleep through every pause: CI saw it), so that a
        # refusal is counted is proven by test_ring.c, not here.
        first, last = dumps[0], dumps[during - 1]
        for c in first.cpus:
            self.assertGreater(last.cpu(c.cpu).recorded, c.recorded,
                               f"CPU {c.cpu} wrote nothing between two dumps")
        totals = self.stress_totals(final)
        self.assertEqual(sorted(totals), list(range(cpus)))
        for cpu, (attempts, refused) in totals.items():
            self.assertLessEqual(refused, final.cpu(cpu).refused, f"CPU {cpu}")
            self.assertGreater(attempts, refused, f"CPU {cpu}")
        self.no_faults(m)


if __name__ == "__main__":
    unittest.main()


class Schema(WorkloadCase):
    """The dump names its workloads (%W), and the kernel's `s` summary and
    the host time the same BEGIN/END pairs by the same nesting rule
    (docs/dump-format.md, "BEGIN/END pairs")."""

    PAIR_LINE = re.compile(rb"^pair (\w+): n=(\d+) min/avg/max (\d+)/(\d+)/(\d+) TSC ticks\r?$",
                           re.M)

    def test_kernel_and_host_pair_statistics_agree(self):
        from btlib.timeline.stats import pair_durations
        from btlib.timeline.timeline import Timeline
        m, info = self.boot(smp=2, cmdline=f"workload=timer:samples=20 {BIG_RINGS}")
        m.wait_for(done_re("timer"), WORKLOAD_TIMEOUT_S, start=0)
        start = len(m.output())
        m.send(b"t")                   # tracing off: `s` and `d` see the same rings
        m.wait_for(rb"^trace: tracing off", 10, start=start)
        start = len(m.output())
        m.send(b"s")
        # WORKLOAD has the highest BEGIN id: its line is the table's last
        m.wait_for(rb"^pair WORKLOAD: [^\r\n]*\r?\n", 30, start=start)
        kernel = {g[0].decode(): tuple(int(x) for x in g[1:])
                  for g in self.PAIR_LINE.findall(m.output()[start:])}
        dump, data = self.dump(m)
        host = {}
        for name, ticks in pair_durations(Timeline(dump)).items():
            host[name] = (len(ticks), min(ticks), sum(ticks) // len(ticks), max(ticks))
        self.assertEqual(kernel, host)
        # CPU 0 nests its own part of the run inside the whole run: two pairs there.
        self.assertEqual(kernel["WORKLOAD"][0], 3)
        self.assertGreater(kernel["IRQ_TIMER"][0], 0)
        names = {w.id: w.name for w in dump.workloads.values()}
        self.assertEqual(names, {1: "hwlat", 2: "ipi", 3: "c2c", 4: "tsc", 5: "timer",
                                 6: "stress", 7: "bench"})
        self.assertEqual(dump.workloads[5].results, ("TIMER_WAKE", "TIMER_CPU", "TIMER_RANGE"))
        doc, _ = self.report(data)
        self.assertEqual(self.run_of(doc, "timer")["cpus"][1]["samples"] +
                         self.run_of(doc, "timer")["cpus"][1]["missed"], 20)
        self.no_faults(m)
