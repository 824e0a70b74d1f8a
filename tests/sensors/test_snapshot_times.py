"""`pth-top snapshot`'s process table: TIME+ is CPU time, as in top and the dashboard; ELAPSED is wall time."""

from __future__ import annotations

from dataclasses import replace

from pth_top.sensors.model import GpuProcessUse, ProcessSample
from pth_top.sensors.snapshot_json import snapshot_to_dict
from pth_top.sensors.snapshot_table import format_snapshot_table
from pth_top.units import GIB
from tests.fakes.snapshots import make_snapshot

# Started 2 h before the snapshot, busy for 45 s of CPU: the two times differ, so a swap shows.
TRAINER = ProcessSample(pid=4242, ppid=1, user="alice", cpu_percent=99.0, memory_percent=1.0, rss_bytes=GIB,
                        state="running", start_time_s=1000.0 - 7200.0, cpu_time_s=45.0, command="python train.py")


def process_table(snapshot) -> dict[str, str]:
    """The trainer's row of the snapshot table, by column heading."""
    lines = format_snapshot_table(snapshot, top_processes=1, width=None).splitlines()
    header_at = next(index for index, line in enumerate(lines) if line.strip().startswith("PID"))
    headers, row = lines[header_at].split(), lines[header_at + 1]
    return dict(zip(headers, row.split(None, len(headers) - 1), strict=True))


def test_time_is_cpu_time_and_elapsed_is_named_so():
    row = process_table(replace(make_snapshot(), processes=(TRAINER,)))
    assert row["TIME+"] == "45s" and row["ELAPSED"] == "2:00:00"
    assert "TIME" not in row, "no column named plain TIME that means wall time"


def test_json_names_both_times():
    document = snapshot_to_dict(replace(make_snapshot(), processes=(TRAINER,)))
    trainer = document["processes"][0]
    assert trainer["cpu_time_s"] == 45.0 and trainer["running_time_s"] == 7200.0


def test_container_and_sm_util_reach_the_table_and_json():
    busy = replace(TRAINER, container="docker:3f4e5a6b7c8d",
                   gpu_uses=(GpuProcessUse(0, 2 * GIB, "compute", sm_util_percent=87.0),))
    snapshot = replace(make_snapshot(), processes=(busy,))
    text = format_snapshot_table(snapshot, top_processes=1, width=None)
    assert "CONTAINER" in text and "2.0 GiB @0 SM 87%" in text and "docker:3f4e5a6b7c8d" in text
    trainer = snapshot_to_dict(snapshot)["processes"][0]
    assert trainer["container"] == "docker:3f4e5a6b7c8d" and trainer["gpu_uses"][0]["sm_util_percent"] == 87.0
