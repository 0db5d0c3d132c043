"""Ctrl-C for the scripts.

A job started with `&`, or from a script that ignores SIGINT, begins
with SIGINT ignored, and Python keeps it ignored: Ctrl-C (or `kill -INT`)
would then do nothing. A tool whose help says Ctrl-C stops it calls
ctrl_c_stops() first."""

import signal


def ctrl_c_stops():
    """SIGINT raises KeyboardInterrupt again, however this process started."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
