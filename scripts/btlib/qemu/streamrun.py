"""The boots behind bench's stream rows (issue 35, item 5; the figures are
btlib.report.streambench's).

Each step is one QEMU boot (TCG, CPUS CPUs, user-mode networking, a NIC)
with `trace.stream=net`, `net.key=` a fresh key and `net.to=` a UDP
socket on 127.0.0.1 that a netcapture.Receiver with that key reads, as
capture --net would (it confirms each part, asks for lost lines again and
writes the parts into DIR/<MAC>.log). The stream runs for `seconds` from
its part 0; `n` stops it, its final part is waited for, `s` prints its
counters; then the log's parts give the figures. The steps offer more and
more events: the timer at 1, 4 and 10 kHz per CPU (10 kHz is timer_hz's
limit), then the stress workload flat out (the ceiling).

The trace point's cost: one more boot without `trace.stream`, the bench
workload (key 7) once with no stream, then `n` and the same workload with
the stream running, in the same boot.
"""

import collections
import glob
import os
import re
import secrets
import select
import socket
import tempfile
import threading
import time

from . import launch
from .session import Session
from ..capture import netcapture
from ..dump import dumplog
from ..report import benchlines
from ..report import streambench as sb

CPUS = 4
NICS = ('e1000', 'virtio')
# (step, its options, a key pressed once the stream runs): each offers
# more events than the one before. The stress workload (key 6: every CPU
# flat out for 10 s) starts after part 0, so that the stream is running
# when it begins, and the step ends after it.
STEPS = (('timer 1 kHz', 'timer_hz=1000', None), ('timer 4 kHz', 'timer_hz=4000', None),
         ('timer 10 kHz', 'timer_hz=10000', None),
         ('10 kHz, 256 ring', 'timer_hz=10000 trace.events=256', None),
         ('stress', 'timer_hz=1000', b'6'))
WORKLOAD_DONE = rb'^workload: \w+ run=\d+ done'
WORKLOAD_TIMEOUT_S = 180       # stress's 10 s, under TCG on a shared host
AFTER_S = 1.0                  # a part or more after the workload, before n
BOOTS = len(NICS) * len(STEPS) + 1      # and the trace point's cost
HOST = '10.0.2.2'              # user-mode networking's host, 127.0.0.1 here
READY_TIMEOUT_S = 180
START_TIMEOUT_S = 60           # READY to part 0 in the log (DHCP first)
FINAL_TIMEOUT_S = 60           # `n` to the final part in the log
COUNTERS_TIMEOUT_S = 10
BENCH_TIMEOUT_S = 600
RCVBUF = 8 << 20
NOTES_KEPT = 20
POLL_S = 0.2


class StepError(Exception):
    """A step could not run: one line (and what the console and the
    receiver said last, for the JSON); the other steps still run."""

    def __init__(self, why, detail=''):
        super().__init__(why)
        self.detail = detail


class Pump(threading.Thread):
    """The UDP socket into a netcapture.Receiver (as capture --net), every
    datagram's bytes counted first (streambench.WireCount). Only this
    thread touches the receiver until close()."""

    def __init__(self, outdir, key):
        super().__init__(name='bench-stream-rx', daemon=True)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        self.udp.bind(('127.0.0.1', 0))
        self.udp.setblocking(False)
        self.port = self.udp.getsockname()[1]
        self.notes = collections.deque(maxlen=NOTES_KEPT)
        self.rx = netcapture.Receiver(outdir, self.udp.sendto, self.notes.append,
                                      keys=[('bench', key)])
        self.wire = sb.WireCount()
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            select.select([self.udp], [], [], POLL_S)
            for _ in range(4096):
                try:
                    data, addr = self.udp.recvfrom(65536)
                except BlockingIOError:
                    break
                self.wire.feed(data)
                self.rx.feed(data, addr)

    def close(self):
        self.done.set()
        if self.is_alive():
            self.join()
        self.rx.close()
        self.udp.close()


class PartWatch:
    """The parts' DUMP BEGIN lines as capture writes them into DIR/*.log,
    read as they grow: how many parts, and whether a final one came."""

    BEGIN = re.compile(rb'^DUMP BEGIN [^\r\n]*', re.M)

    def __init__(self, outdir):
        self.outdir, self.at, self.rest = outdir, {}, {}
        self.parts, self.final = 0, False

    def poll(self):
        for path in glob.glob(os.path.join(self.outdir, '*.log')):
            with open(path, 'rb') as f:
                f.seek(self.at.get(path, 0))
                data = self.rest.get(path, b'') + f.read()
                self.at[path] = f.tell()
            cut = data.rfind(b'\n') + 1
            self.rest[path] = data[cut:]
            for m in self.BEGIN.finditer(data[:cut]):
                words = dict(w.split(b'=', 1) for w in m.group(0).split() if b'=' in w)
                if b'stream' in words and b'part' in words:
                    self.parts += 1
                    self.final = self.final or words.get(b'final') == b'1'

    def wait(self, ready, timeout, s):
        """Poll until ready(self); False at the timeout or when QEMU ends."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and s.proc.poll() is None:
            self.poll()
            if ready(self):
                return True
            time.sleep(POLL_S)
        return False


def read_parts(outdir):
    """streambench.streams() of every log in outdir, a dump at a time."""
    parts = []
    for path in sorted(glob.glob(os.path.join(outdir, '*.log'))):
        with open(path, 'rb') as f:
            parts += [sb.part_of(d) for d in dumplog.iter_dumps(dumplog.LogReader(f))]
    return sb.streams(parts)


class Boot:
    """One streaming boot: the receiver, QEMU, the log's parts."""

    def __init__(self, iso, nic, cmdline, name, log, events):
        self.tmp = tempfile.TemporaryDirectory(prefix='bt-bench-stream-')
        key = secrets.token_bytes(16)
        self.pump = Pump(self.tmp.name, key)
        self.name = name
        opts = launch.Options(iso=iso, smp=CPUS, accel='tcg', nic=nic, cmdline=(
            f'trace.events={events} {cmdline} net.key={key.hex()} '
            f'net.to={HOST}:{self.pump.port}'))
        self.session = Session(opts, name=name, log=log)
        self.watch = PartWatch(self.tmp.name)

    def __enter__(self):
        self.pump.start()
        try:
            self.session.start()
        except launch.QemuError as e:
            self.__exit__()
            raise StepError(f'QEMU did not start: {e}') from None
        return self

    def __exit__(self, *exc):
        self.session.stop()
        self.pump.close()
        return False

    def fail(self, why):
        said = '; '.join(self.pump.notes)[-300:]
        raise StepError(why, f'console: {self.session.tail(300)!r}; capture: {said}')

    def started(self, timeout=START_TIMEOUT_S):
        """Wait for part 0 of a stream in the log."""
        if not self.watch.wait(lambda w: w.parts > 0, timeout, self.session):
            self.fail(f'no part of a stream in the log within {timeout} s')

    def stop(self):
        """`n`, the final part, then `s`: the stream's counters (or {})."""
        self.session.send(b'n')
        final = self.watch.wait(lambda w: w.final, FINAL_TIMEOUT_S, self.session)
        at = self.session.size()
        self.session.send(b's')
        try:
            self.session.wait_for(sb.STREAM_LINE, COUNTERS_TIMEOUT_S, at, 'stream: line')
        except launch.QemuError:
            pass
        out = sb.stream_counters(self.session.output(at))
        if not final:
            out['error'] = f'no final part within {FINAL_TIMEOUT_S} s of n'
        return out

    def figures(self):
        """The figures of the boot's one stream (the last, if several),
        once QEMU has ended; the log goes with them."""
        try:
            got = read_parts(self.tmp.name)
        finally:
            self.tmp.cleanup()
        if not got:
            return {'error': 'no part of a stream in the log'}
        return sb.figures(got[max(got)], self.pump.wire)


def step(iso, nic, name, cmdline, key, seconds, log, events):
    """One boot streaming for `seconds` (with a key: until the workload
    it starts is done): its figures and counters."""
    try:
        with Boot(iso, nic, f'{cmdline} trace.stream=net', f'stream {nic} {name}', log,
                  events) as b:
            b.session.ready(READY_TIMEOUT_S)
            b.started()
            if key:
                at = b.session.size()
                b.session.send(key)
                b.session.wait_for(WORKLOAD_DONE, WORKLOAD_TIMEOUT_S, at, 'the workload\'s end')
                time.sleep(AFTER_S)
            else:
                time.sleep(seconds)
            counters = b.stop()
        return {'step': name, 'cmdline': cmdline, 'key': key.decode() if key else None,
                'counters': counters, 'figures': b.figures()}     # once QEMU has ended
    except (StepError, launch.QemuError) as e:
        return {'step': name, 'error': str(e), 'detail': getattr(e, 'detail', '')}


def bench_table(s, timeout):
    """Key 7 and the kernel's BENCH table it printed."""
    at = s.size()
    s.send(b'7')
    s.wait_for(rb'^BENCH END', timeout, at, 'BENCH END line')
    tables = [t for t in benchlines.bench_lines(s.output(at))
              if t['header'].get('where') == 'kernel']
    if not tables:
        raise StepError('the kernel printed no complete BENCH table')
    return tables[-1]


def trace_cost(iso, log, events):
    """The bench workload without a stream, then with one on. Its loops
    hold every CPU with interrupts off, and the consumer runs in the keys
    CPU's loop: `parts_during` says whether it took any meanwhile."""
    try:
        with Boot(iso, 'e1000', 'timer_hz=1000', 'stream cost', log, events) as b:
            b.session.ready(READY_TIMEOUT_S)
            without = bench_table(b.session, BENCH_TIMEOUT_S)
            b.session.send(b'n')
            b.started()
            b.watch.poll()
            before = b.watch.parts
            with_stream = bench_table(b.session, BENCH_TIMEOUT_S)
            b.watch.poll()
            during = b.watch.parts - before
            counters = b.stop()
        return {'scopes': sb.trace_cost(without, with_stream), 'without': without,
                'with_stream': with_stream, 'parts_during': during, 'counters': counters,
                'figures': b.figures()}
    except (StepError, launch.QemuError) as e:
        return {'error': str(e), 'detail': getattr(e, 'detail', '')}


def run(iso, seconds, log_path, say, events=4096):
    """Every step on each NIC, then the trace point's cost: the document
    streambench.print_stream() prints and bench writes as JSON."""
    doc = {'cpus': CPUS, 'events': events, 'seconds': seconds, 'nics': {}}
    with open(log_path, 'wb') as log:
        for nic in NICS:
            steps = []
            for name, cmdline, key in STEPS:
                say(f'stream: {nic}, {name}: one boot, '
                    + (f'key {key.decode()}' if key else f'{seconds:g} s of streaming'))
                steps.append(step(iso, nic, name, cmdline, key, seconds, log, events))
                if 'error' in steps[-1]:
                    say(f'stream: {nic}, {name}: {steps[-1]["error"]}')
            doc['nics'][nic] = {'steps': steps, 'sustained': sb.sustained(steps)}
        say('stream: the bench workload without, then with a stream running (one boot)')
        doc['trace_cost'] = trace_cost(iso, log, events)
    return doc


def failed(doc):
    """Whether a step could not run (bench's exit status 1)."""
    steps = [s for r in doc.get('nics', {}).values() for s in r['steps']]
    return any('error' in s or 'error' in s.get('figures', {}) for s in steps) or \
        'error' in doc.get('trace_cost', {})
