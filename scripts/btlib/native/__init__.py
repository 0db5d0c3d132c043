"""native: the compiled core, build/host/libbtdecode.so. library holds the
one ctypes handle and checks every struct and constant against the library
(decoder/abi.c); choice decides once per run whether the compiled path is
used (BT_PURE_PYTHON=1: never)."""
