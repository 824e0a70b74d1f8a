"""Disk usage as `df` shows it: used / (used + available), so root's reserved blocks count as full."""

from __future__ import annotations

import os

import pytest

from pth_top.sensors.disks import DiskReader
from pth_top.sensors.model import FilesystemUsage
from pth_top.sensors.na import is_na
from pth_top.tui.panels.io import disks_text
from pth_top.units import GIB

# 100 GiB disk, 20 GiB used, 53 GiB available to users: 27 GiB reserved for root (df says 28 %).
RESERVED_DISK = FilesystemUsage("/", "/dev/sda1", "ext4", 100 * GIB, 20 * GIB, 53 * GIB)


def test_used_percent_leaves_root_reserve_out_like_df():
    assert round(RESERVED_DISK.used_percent) == 27


def test_empty_filesystem_has_no_percent():
    assert is_na(FilesystemUsage("/x", "none", "ext4", 0, 0, 0).used_percent)


def test_disk_panel_shows_the_df_percent():
    line = next(line for line in disks_text([], [RESERVED_DISK]).plain.splitlines() if line.startswith("/ "))
    assert "27%" in line and "20%" not in line


def test_root_filesystem_matches_statvfs_like_df():
    root = next((fs for fs in DiskReader.filesystems() if fs.mountpoint == "/"), None)
    if root is None:
        pytest.skip("no real filesystem mounted on / here")
    stat = os.statvfs("/")
    used = (stat.f_blocks - stat.f_bfree) * stat.f_frsize
    available = stat.f_bavail * stat.f_frsize
    assert abs(root.used_percent - 100.0 * used / (used + available)) < 1.0
