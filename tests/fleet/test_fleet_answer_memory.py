"""A hostile Prometheus's heaviest answers (the tester's shape: 50 series of ~20,000 labels each, just under the
size cap, to every query of a refresh) cost one refresh bounded memory and time, over real loopback sockets."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pth_top.fleet.client import MAX_ANSWER_BYTES

PROM_TIMEOUT_S = 20
# Generous: before, one refresh took ~5 GB and minutes; now tens of MB and seconds.
MAX_RSS_BYTES = 400 * 1024 * 1024
MAX_WALL_S = PROM_TIMEOUT_S + 60


def many_labels_answer(size_bytes: int, targets: bool) -> bytes:
    per_series = size_bytes // 18 // 50
    labels = [{"instance": f"h{s}:1", "gpu": "0", **{f"a{s:02d}{j:07d}": "" for j in range(per_series)}}
              for s in range(50)]
    if targets:
        data: dict = {"activeTargets": [{"labels": each, "scrapeInterval": "15s"} for each in labels]}
    else:
        data = {"resultType": "vector", "result": [{"metric": each, "value": [0, "1"]} for each in labels]}
    return json.dumps({"status": "success", "data": data}).encode()


@pytest.fixture(scope="module")
def hostile_prometheus():
    bodies = {targets: many_labels_answer(15 * 1024 * 1024, targets) for targets in (False, True)}  # just under
    assert max(map(len, bodies.values())) < MAX_ANSWER_BYTES

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.answer()

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.answer()

        def answer(self) -> None:
            body = bodies["/targets" in self.path]
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


# Runs `pth-top ARGS...` and writes its own peak RSS (bytes) to the file named first: Linux's VmHWM, the high-water
# mark of this program's memory since its exec. Not ru_maxrss: Linux carries over into it the peak of the memory
# the child had before exec, which is the forking pytest's (fork and vfork alike), so a suite whose pytest grew to
# 1.3 GB failed this test whatever pth-top used. ru_maxrss only where there is no /proc (an overestimate, never under).
MEASURED_CHILD = """
import resource, sys
from pth_top.tui.cli import main
try:
    code = main(sys.argv[2:])
finally:
    try:
        with open("/proc/self/status") as status:
            peak_bytes = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        peak_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with open(sys.argv[1], "w") as peak:
        peak.write(str(peak_bytes))
sys.exit(code)
"""


def test_a_refresh_of_huge_label_sets_stays_within_memory_and_time(hostile_prometheus, tmp_path):
    peak_file = tmp_path / "peak"
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-c", MEASURED_CHILD, str(peak_file), "fleet", "--prometheus", hostile_prometheus,
         "--json", "--prom-timeout", str(PROM_TIMEOUT_S)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = process.communicate(timeout=MAX_WALL_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    # Before, the 11 answers of a refresh were decoded on the event loop, ~300 MB and seconds each.
    assert time.monotonic() - started < MAX_WALL_S, stderr
    assert int(peak_file.read_text()) < MAX_RSS_BYTES, f"peak RSS {int(peak_file.read_text()) // 2**20} MiB"
    # Refused in one line (answers together over the cap), or every oversized series skipped and counted.
    assert len(stderr.strip().splitlines()) <= 1 and "Traceback" not in stderr, stderr
    assert stderr.strip() or json.loads(stdout)["malformed"] > 0
