"""What the kernel says about a block device, and whether it is safe to overwrite.

Everything comes from sysfs and procfs (no external tools):
- /sys/dev/block/MAJ:MIN points at the device's sysfs directory; a
  directory holding a `partition` file is a partition of its parent;
- /sys/block/X/{size,removable,device/model,device/vendor,holders/};
- /sys/block/loopN/loop/backing_file names the file behind a loop device;
- /proc/mounts and /proc/swaps name every mounted or swapped device.

`refusal(...)` returns the reason a target must not be written, or None.
"""

import os
import stat
from dataclasses import dataclass, field

SECTOR = 512                 # /sys/block/X/size is always in 512-byte units
MOUNT_TABLES = ('/proc/mounts',)
SWAP_TABLE = '/proc/swaps'
SYS_DEV_BLOCK = '/sys/dev/block'


@dataclass
class BlockDevice:
    path: str
    name: str                # kernel name: sdb, loop0, mmcblk0
    sysdir: str
    size: int                # bytes
    removable: bool
    usb: bool
    model: str
    partition: bool
    parent: str              # whole-disk name for a partition, else name
    rdevs: set = field(default_factory=set)   # this disk and its partitions
    sysdirs: list = field(default_factory=list)  # sysfs dirs of the same
    backing: str = ''        # a loop device's backing file, else ''


def _read(path, default=''):
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            return f.read().strip()
    except OSError:
        return default


def _devnum(text):
    major, _, minor = text.partition(':')
    return os.makedev(int(major), int(minor))


def describe(path):
    """BlockDevice for block special file `path` (OSError if unreadable)."""
    st = os.stat(path)
    sysdir = os.path.realpath(
        os.path.join(SYS_DEV_BLOCK, f'{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}'))
    name = os.path.basename(sysdir)
    partition = os.path.exists(os.path.join(sysdir, 'partition'))
    disk_dir = os.path.dirname(sysdir) if partition else sysdir
    rdevs, sysdirs = {_devnum(_read(os.path.join(disk_dir, 'dev')))}, [disk_dir]
    for entry in os.listdir(disk_dir):
        part = os.path.join(disk_dir, entry)
        if os.path.exists(os.path.join(part, 'partition')):
            rdevs.add(_devnum(_read(os.path.join(part, 'dev'))))
            sysdirs.append(part)
    vendor = _read(os.path.join(disk_dir, 'device', 'vendor'))
    model = _read(os.path.join(disk_dir, 'device', 'model'))
    return BlockDevice(
        path=path, name=name, sysdir=sysdir,
        size=int(_read(os.path.join(sysdir, 'size'), '0') or 0) * SECTOR,
        removable=_read(os.path.join(disk_dir, 'removable')) == '1',
        usb='/usb' in disk_dir,
        model=' '.join(p for p in (vendor, model) if p) or 'unknown model',
        partition=partition, parent=os.path.basename(disk_dir),
        rdevs=rdevs, sysdirs=sysdirs,
        backing=_read(os.path.join(disk_dir, 'loop', 'backing_file')))


def _block_rdev(source):
    try:
        st = os.stat(source)
    except OSError:
        return None
    return st.st_rdev if stat.S_ISBLK(st.st_mode) else None


def users(dev):
    """Where the device or one of its partitions is in use: ['/dev/sdb1 on /mnt', ...]."""
    found = []
    for table in MOUNT_TABLES:
        for line in _read(table).splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0].startswith('/') and _block_rdev(parts[0]) in dev.rdevs:
                found.append(f'{parts[0]} mounted on {parts[1].replace(chr(92) + "040", " ")}')
    for line in _read(SWAP_TABLE).splitlines()[1:]:
        parts = line.split()
        if parts and _block_rdev(parts[0]) in dev.rdevs:
            found.append(f'{parts[0]} used as swap')
    for sysdir in dev.sysdirs:
        try:
            holders = sorted(os.listdir(os.path.join(sysdir, 'holders')))
        except OSError:
            continue
        found += [f'/dev/{os.path.basename(sysdir)} held by {h} (device mapper, RAID or LVM)'
                  for h in holders]
    return found


def refusal(dev, image_size):
    """Why `dev` must not receive an image of `image_size` bytes, or None."""
    if dev.partition:
        return (f'{dev.path} is a partition of /dev/{dev.parent}: '
                f'give the whole device (/dev/{dev.parent})')
    in_use = users(dev)
    if in_use:
        return f'{dev.path} is in use: {"; ".join(in_use)} (unmount it first)'
    if dev.size == 0:
        return f'{dev.path} has no medium (size 0)'
    if dev.size < image_size:
        return (f'{dev.path} is too small: {dev.size} bytes for an image of '
                f'{image_size} bytes')
    if not dev.removable and not dev.usb:
        return (f'{dev.path} ({dev.model}) is neither removable nor on USB: '
                f'refusing to overwrite what looks like a fixed disk')
    return None
