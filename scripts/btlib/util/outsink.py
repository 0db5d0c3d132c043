"""Where the row exporters (CSV, text) write: a text or a binary stream.

Their output is UTF-8 text with '\\n' line ends. `scripts/decode` hands
them a binary stream (the output file opened 'wb', stdout's buffer), so
rows made as bytes in C go out without being decoded to str and encoded
back; tests and other callers may hand them a text stream, opened with
newline='' so that no line end is translated. Either way the bytes that
reach the file are the same.
"""

import io


def is_binary(out) -> bool:
    """out takes bytes (a binary stream, buffered or not)."""
    return isinstance(out, (io.BufferedIOBase, io.RawIOBase))


def _write_all(out):
    """out.write that writes every byte (a raw stream, as sys.stdout.buffer
    is under PYTHONUNBUFFERED, may take only some)."""
    if not isinstance(out, io.RawIOBase):
        return out.write

    def write(data):
        view = memoryview(data)
        while view:
            view = view[out.write(view):]
    return write


def byte_sink(out):
    """A write(bytes-like) putting UTF-8 bytes on out."""
    if is_binary(out):
        return _write_all(out)
    return lambda data: out.write(str(data, 'utf-8'))


def text_sink(out):
    """A write(str) putting text on out (as UTF-8 when out is binary)."""
    if is_binary(out):
        write = _write_all(out)
        return lambda text: write(text.encode('utf-8'))
    return out.write
