"""The keys that prove a machine's datagrams and the host's
(docs/network-protocol.md, "Keys").

A boot's key is 16 bytes: the lab key its command line gave (net.key=,
32 hex digits: scripts/netboot, scripts/mkusb, make run and
scripts/run-qemu hand one out), else the 16 characters of the session
code the machine shows (80 bits; typed with or without its dashes).

The key store: the keys the project's own tools made on this host, one
file each (<name>.key: 32 hex digits on a line, '#' comments), in
$BARETRACE_KEYS, else $XDG_CONFIG_HOME/baretrace/keys, else
~/.config/baretrace/keys (the folder mode 0700, each file 0600).
`capture --net` reads them all unless given --key-file.
"""

import os
import re
import secrets


KEY_BYTES = 16
KEYS_MAX = 64                       # keys one capture tries (each costs a tag per datagram)
CODE_RE = re.compile(r'\A[A-HJ-NP-Z2-9]{16}\Z')
HEX_RE = re.compile(r'\A[0-9a-fA-F]{32}\Z')


class Error(Exception):
    """A key file or code that cannot be used, in one line."""


def store_dir():
    """Where the project's tools keep the keys they hand out."""
    if os.environ.get('BARETRACE_KEYS'):
        return os.environ['BARETRACE_KEYS']
    base = os.environ.get('XDG_CONFIG_HOME') or os.path.join(os.path.expanduser('~'), '.config')
    return os.path.join(base, 'baretrace', 'keys')


def parse_code(text):
    """A session code as typed ('ABCD-EFGH-JKLM-NPQR', any case, dashes or
    spaces anywhere) -> its 16 characters, or None."""
    code = re.sub(r'[-\s]', '', text).upper()
    return code if CODE_RE.match(code) else None


def grouped(code):
    return '-'.join(code[i:i + 4] for i in range(0, len(code), 4))


def code_key(code):
    """The key of a session code: its 16 ASCII characters."""
    return code.encode('ascii')


def read_file(path):
    """The key in a key file (32 hex digits on a line of its own)."""
    try:
        with open(path) as f:
            text = f.read(4096)
    except OSError as e:
        raise Error(f'cannot read key file {path}: {e.strerror}') from None
    words = [w for line in text.splitlines() for w in [line.split('#', 1)[0].strip()] if w]
    if len(words) != 1 or not HEX_RE.match(words[0]):
        raise Error(f'{path}: not a key file (one line of 32 hex digits)')
    return bytes.fromhex(words[0])


def load_store(folder=None):
    """[(name, key)] of the store's keys, newest first, at most KEYS_MAX;
    files that are not keys are skipped (said in the returned notes)."""
    folder = folder or store_dir()
    try:
        names = [n for n in os.listdir(folder) if n.endswith('.key')]
    except OSError:
        return [], []
    paths = sorted((os.path.join(folder, n) for n in names), key=_mtime, reverse=True)
    keys, notes = [], []
    for path in paths[:KEYS_MAX]:
        try:
            keys.append((os.path.basename(path)[:-4], read_file(path)))
        except Error as e:
            notes.append(str(e))
    if len(paths) > KEYS_MAX:
        notes.append(f'{folder}: {len(paths) - KEYS_MAX} older keys not read (at most '
                     f'{KEYS_MAX})')
    return keys, notes


def _mtime(path):
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0


def fresh():
    """A fresh random key (16 bytes)."""
    return secrets.token_bytes(KEY_BYTES)


def write_new(path):
    """A fresh random key in a new file (mode 0600); its hex digits."""
    key = secrets.token_hex(KEY_BYTES)
    os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, 'w') as f:
        f.write(f'# a baretrace lab key: net.key= on the command line; capture --net reads '
                f'it\n{key}\n')
    return key


def made_once(path):
    """The key in path, made there (mode 0600) the first time."""
    try:
        return write_new(path)
    except FileExistsError:
        return read_file(path).hex()


def remember(name, key_hex):
    """Put a key into the store as <name>.key (so capture finds it); its path."""
    folder = store_dir()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, f'{name}.key')
    tmp = f'{path}.{os.getpid()}.tmp'
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w') as f:
        f.write(f'# a baretrace lab key ({name})\n{key_hex}\n')
    os.replace(tmp, path)
    return path
