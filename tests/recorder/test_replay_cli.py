"""`pth-top replay FILE`: GPU rows of a window as CSV or JSON (--from/--to, ISO or relative, --gpu), the event
log with --events, and one line with exit 2 for what it cannot do."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess

import pytest

from pth_top.recorder.event import Event
from pth_top.recorder.replay import iso_time
from pth_top.recorder.store import Retention
from tests.recorder.helpers import PTH_TOP, REPO
from tests.recorder.test_retention import START_S, recorder_at
from tests.sensors.helpers import FakeClock


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    path = tmp_path_factory.mktemp("replay") / "r.sqlite"
    clock = FakeClock(START_S)
    recorder = recorder_at(path, clock, Retention())
    try:
        for _ in range(60):
            recorder.step()
            clock.advance(1.0)
        recorder.store.write_events([Event(START_S + 30, "xid", "critical", "GPU 3: Xid 79: GPU has fallen off the bus",
                                           3, "GPU-3", evidence={"xid": 79})])
    finally:
        recorder.close()
    return path


def replay(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([*PTH_TOP, "replay", *arguments], cwd=REPO, capture_output=True, text=True, timeout=60)


def test_csv_export_of_a_window_and_one_gpu(recording):
    done = replay(str(recording), "--csv", "--from", "-10s", "--gpu", "3")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert len(rows) == 11 and {row["gpu_index"] for row in rows} == {"3"}
    assert float(rows[0]["time_s"]) == START_S + 49 and rows[-1]["time"] == iso_time(START_S + 59)
    assert float(rows[0]["utilization_percent"]) >= 0 and rows[0]["name"].startswith("NVIDIA")


def test_json_export_between_iso_times(recording):
    done = replay(str(recording), "--json", "--from", iso_time(START_S + 10), "--to", iso_time(START_S + 19))
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["schema"] == "pth-top.replay.gpu" and len(body["rows"]) == 10 * 8
    assert {row["gpu_index"] for row in body["rows"]} == set(range(8))


def test_events_are_printed_one_per_line(recording):
    done = replay(str(recording), "--events")
    assert done.returncode == 0, done.stderr
    xid = [line for line in done.stdout.splitlines() if " xid " in line]
    assert len(xid) == 1 and "GPU 3" in xid[0] and "fallen off the bus" in xid[0] and "critical" in xid[0]
    assert xid[0].startswith(iso_time(START_S + 30))
    as_json = json.loads(replay(str(recording), "--events", "--json", "--gpu", "3").stdout)
    assert [event["kind"] for event in as_json["events"]] == ["xid"]
    assert as_json["events"][0]["evidence"] == {"xid": 79}


@pytest.mark.parametrize(("arguments", "says"), [
    ((), "not a terminal; the replay needs one"),
    (("--at", "yesterday-ish"), "not a time"),
    (("--csv", "--from", "yesterday-ish"), "not a time"),
    (("--csv", "--from", "-1m", "--to", "-2m"), "--from is after --to"),
])
def test_what_replay_cannot_do_is_one_line_and_exit_2(recording, arguments, says):
    done = replay(str(recording), *arguments)
    assert done.returncode == 2 and says in done.stderr and done.stderr.count("\n") == 1
    assert done.stdout == ""


def test_a_file_that_is_no_recording_is_refused(tmp_path):
    other = tmp_path / "notes.sqlite"
    other.write_text("not a database at all, just text " * 100)
    done = replay(str(other), "--events")
    assert done.returncode == 2 and "not a pth-top recording" in done.stderr and "Traceback" not in done.stderr


def test_the_dashboard_replay_of_a_bad_file_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is no database" * 100)
    for arguments in ((str(bad),), ()):  # a bad file, and no FILE with no recording of this host yet
        done = subprocess.run([*PTH_TOP, "replay", *arguments], cwd=REPO, capture_output=True, text=True,
                              timeout=60, env={**os.environ, "PTH_TOP_DATA_DIR": str(tmp_path / "data")})
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and done.stdout == "", done.stderr
        assert "not a pth-top recording" in done.stderr if arguments else "no such file" in done.stderr
