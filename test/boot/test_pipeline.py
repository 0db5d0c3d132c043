"""The whole user path, for real: boot the ISO with COM1 on a
pseudo-terminal (QEMU -serial pty, as a USB-serial adapter would appear),
capture it with scripts/capture --port, then decode the log into every
format and check each one against the others and against the viewers'
rules: the JSON loads with one track per CPU, babeltrace2 reads the CTF
with the same events and timestamps, and the raw records are the CSV's.
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
sys.path.insert(0, os.path.join(REPO, "test", "host"))

from btlib.qemu import launch as qemu
from harness import ISO, LOG_DIR
from test_decode_support import (BABELTRACE, RECORD, babeltrace_cycles,
                                 csv_records, slices_nest)

CAPTURE = os.path.join(REPO, "scripts", "capture")
DECODE = os.path.join(REPO, "scripts", "decode")
PTY_RE = re.compile(rb"char device redirected to (/dev/pts/\d+)")
CPUS = 4


def run(*argv, timeout=180):
    return subprocess.run([sys.executable, *argv], capture_output=True, timeout=timeout)


class Pipeline(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bt-pipeline-")
        opts = qemu.Options(iso=ISO, fw="bios", media="cd", smp=CPUS, accel="tcg",
                            cmdline="timer_hz=1000", serial="pty")
        self.proc = qemu.launch(opts, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.addCleanup(self.stop)
        self.pty = self.find_pty()

    def find_pty(self):
        """QEMU names the pty it made on its output."""
        seen = b""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            seen += line
            m = PTY_RE.search(line)
            if m:
                return m.group(1).decode()
        self.fail(f"QEMU named no pty: {seen[-500:]!r}")

    def stop(self):
        self.proc.kill()
        self.proc.wait(10)

    def decode(self, log, fmt, out=None):
        args = [DECODE, log, "--format", fmt] + (["-o", out] if out else [])
        r = run(*args)
        self.assertEqual(r.returncode, 0, r.stderr.decode()[-2000:])
        return r

    def test_capture_pty_then_every_format(self):
        log = os.path.join(LOG_DIR, "test_pipeline.capture.log")
        os.makedirs(LOG_DIR, exist_ok=True)
        cap = run(CAPTURE, "--port", self.pty, "-o", log, "--key", "d", "--delay", "2",
                  "--until-dump", "--timeout", "150", timeout=200)
        self.assertEqual(cap.returncode, 0, cap.stderr.decode()[-2000:])
        self.assertIn(b"READY cpus=4", open(log, "rb").read())

        records = csv_records(self.decode(log, "csv").stdout)     # 32-byte records
        fields = [RECORD.unpack(r) for r in records]               # tsc, seq, type, cpu, ...
        cpus = {f[3] for f in fields}
        self.assertEqual(cpus, set(range(CPUS)), "every CPU has events")

        # text: one line per event (plus header lines and *LOST* markers)
        text = self.decode(log, "text").stdout.decode().splitlines()
        body = [ln for ln in text[2:] if "*LOST*" not in ln]
        self.assertEqual(len(body), len(records))

        # raw: the exact 32-byte records, one file per CPU, matching the CSV
        raw_dir = os.path.join(self.tmp, "raw")
        self.decode(log, "raw", raw_dir)
        raw = []
        for name in sorted(os.listdir(raw_dir)):
            data = open(os.path.join(raw_dir, name), "rb").read()
            self.assertEqual(len(data) % RECORD.size, 0)
            raw += [data[i:i + RECORD.size] for i in range(0, len(data), RECORD.size)]
        self.assertEqual(sorted(raw), sorted(records), "raw records are the CSV's, bit for bit")

        # json: loads, one named track per CPU, slices nest
        out = os.path.join(self.tmp, "trace.json")
        self.decode(log, "json", out)
        doc = json.load(open(out))
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        tracks = {e["tid"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
        self.assertEqual(tracks, set(range(CPUS)))
        self.assertIsNone(slices_nest(events))

        # ctf: babeltrace2 reads the same events at the same TSC values
        if not BABELTRACE:
            self.skipTest("babeltrace2 not installed (make test installs it)")
        ctf = os.path.join(self.tmp, "ctf")
        self.decode(log, "ctf", ctf)
        cycles, _ = babeltrace_cycles(ctf)
        self.assertEqual(len(cycles), len(records))
        self.assertEqual(sorted(cycles), sorted(f[0] for f in fields))


if __name__ == "__main__":
    unittest.main()
