"""Which block device a path or swap area lives on, and what kind of disk that is (from /proc and /sys)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Mount:
    mount_point: str
    device_number: str
    filesystem: str
    source: str


@dataclass(frozen=True)
class Disk:
    name: str
    kind: str
    rotating: bool | None


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return None


def _unescape(field: str) -> str:
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def parse_mountinfo(text: str) -> list[Mount]:
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if "-" not in fields or len(fields) < 7:
            continue
        separator = fields.index("-")
        if len(fields) < separator + 3:
            continue
        mounts.append(Mount(_unescape(fields[4]), fields[2], fields[separator + 1], fields[separator + 2]))
    return mounts


def mount_of(path: Path, proc_root: Path) -> Mount | None:
    """The mount that holds `path` (the longest matching mount point; the last one mounted wins)."""
    text = read_text(proc_root / "self" / "mountinfo")
    if text is None:
        return None
    target = os.path.realpath(path)
    best: Mount | None = None
    for mount in parse_mountinfo(text):
        point = mount.mount_point.rstrip("/") or "/"
        inside = point == "/" or target == point or target.startswith(point + "/")
        if inside and (best is None or len(point) >= len(best.mount_point.rstrip("/") or "/")):
            best = mount
    return best


def _whole_disk(device_dir: Path, sys_root: Path, depth: int = 0) -> Path:
    """From a partition or device-mapper node to the physical disk's /sys/block-style directory."""
    if (device_dir / "partition").exists():
        device_dir = device_dir.parent
    slaves_dir = device_dir / "slaves"
    if depth < 4 and slaves_dir.is_dir():
        slaves = sorted(slaves_dir.iterdir())
        if slaves:
            return _whole_disk(slaves[0].resolve(), sys_root, depth + 1)
    return device_dir


def classify_disk(disk_dir: Path) -> Disk:
    name = disk_dir.name
    rotational = read_text(disk_dir / "queue" / "rotational")
    rotating = None if rotational is None else rotational == "1"
    if name.startswith("nvme"):
        return Disk(name, "NVMe SSD", False)
    if name.startswith("zram"):
        return Disk(name, "compressed RAM (zram)", False)
    if name.startswith(("vd", "xvd")):
        return Disk(name, "virtual disk", rotating)
    if name.startswith("mmcblk"):
        return Disk(name, "SD card / eMMC", False)
    if rotating:
        return Disk(name, "rotating disk (HDD)", True)
    if rotating is False:
        return Disk(name, "SATA/SAS SSD" if name.startswith("sd") else "SSD", False)
    return Disk(name, "disk of unknown type", None)


def disk_for_device_number(device_number: str, sys_root: Path) -> Disk | None:
    node = sys_root / "dev" / "block" / device_number
    if not node.exists():
        return None
    return classify_disk(_whole_disk(node.resolve(), sys_root))


def disk_for_device_name(device_path: str, sys_root: Path) -> Disk | None:
    """`/dev/sda2` (or `/dev/mapper/x`, resolved to `dm-N`) to its physical disk."""
    name = os.path.basename(device_path)
    node = sys_root / "class" / "block" / name
    if not node.exists():
        name = os.path.basename(os.path.realpath(device_path))
        node = sys_root / "class" / "block" / name
    if not node.exists():
        return None
    return classify_disk(_whole_disk(node.resolve(), sys_root))


def disk_of_path(path: Path, proc_root: Path, sys_root: Path) -> tuple[Mount | None, Disk | None]:
    mount = mount_of(path, proc_root)
    if mount is None:
        return None, None
    return mount, disk_for_device_number(mount.device_number, sys_root)
