"""`pth-top bench` against hostile input: odd --python, --out, data dirs, full disks, corrupt saved runs.

Each case is one line on stderr and exit 2 (bad input) or 1 (the run started and failed), never a traceback.
"""

from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
import sys

import pytest

from pth_top.benches.client import bench_process
from pth_top.benches.protocol import encode_event
from pth_top.configs.paths import bench_runs_dir, user_data_dir
from tests.bench.fake_children import (
    CLI_CODE,
    FINISHED_LINE,
    GOOD_RUN,
    RESULT_LINE,
    STARTED_LINE,
    canned_child,
    shell_child,
)

LONG_NAME = "x" * 300
LONG_PATH = "/tmp/" + "/".join(["d" * 200] * 30)


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("body, message", [
    ("exec /bin/true", "printed no benchmark events (exit code 0)"),
    ("echo 'hello from a shell'", "printed no benchmark events (not JSON"),
    ("printf '\\033]52;c;cHduZWQ=\\007{\"v\": 2\\n'", "printed no benchmark events"),
    ("kill -9 $$", "killed by SIGKILL"),
    ("echo 'fatal: no torch here' >&2; exit 137", "fatal: no torch here"),
])
def test_a_child_that_is_not_a_benchmark_is_one_line_and_exit_2(cli, capsys, tmp_path, body, message):
    python = shell_child(tmp_path, body)
    assert cli(["bench", "--python", python, "--kernel", "gemm"]) == 2
    err = one_line_error(capsys)
    assert "benchmark did not run: " in err and message in err and "\x1b" not in err and "\x07" not in err
    assert not user_data_dir().exists()  # exit 2: nothing on disk changed


def test_a_device_the_child_does_not_have_is_exit_2_and_leaves_the_data_dir_alone(cli, capsys, tmp_path):
    refusal = [encode_event("error", kernel=None, device=None, variant=None, error_type="UsageError",
                            message="device 'cuda:7' not available here (available: cpu)"),
               encode_event("finished", ok=False, results=0, errors=1, wall_s=0.0)]
    assert cli(["bench", "--python", canned_child(tmp_path, refusal), "--device", "cuda:7"]) == 2
    assert "benchmark did not run: device 'cuda:7' not available here" in one_line_error(capsys)
    assert not user_data_dir().exists()


@pytest.mark.parametrize("python", ["/bin/true", "/bin/echo"])
def test_a_non_python_executable_is_one_line_and_exit_2(cli, capsys, python):
    assert cli(["bench", "--python", python, "--kernel", "gemm"]) == 2
    assert "printed no benchmark events" in one_line_error(capsys)


def test_a_hanging_child_is_stopped_after_the_silence_bound(cli, capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(bench_process, "SILENCE_TIMEOUT_S", 0.5)
    python = shell_child(tmp_path, "exec sleep 600")
    assert cli(["bench", "--python", python, "--kernel", "gemm"]) == 2
    assert "gave no output for 0.5 s and was stopped" in one_line_error(capsys)


def test_a_run_that_started_and_died_prints_what_it_had_and_exits_1(cli, capsys, tmp_path):
    python = canned_child(tmp_path, [STARTED_LINE, RESULT_LINE], after="import os; os.kill(os.getpid(), 9)")
    assert cli(["bench", "--python", python, "--kernel", "gemm"]) == 1
    captured = capsys.readouterr()
    assert "gemm" in captured.out and "fp32 1 thread" in captured.out
    assert captured.err.splitlines()[-1] == "pth-top: benchmark failed: the benchmark process was killed by SIGKILL"


def test_child_messages_reach_the_terminal_escaped(cli, capsys, tmp_path):
    hostile = RESULT_LINE.replace('"note":""', '"note":"\\u001b]0;owned\\u0007"')
    python = canned_child(tmp_path, [STARTED_LINE, hostile, FINISHED_LINE])
    assert cli(["bench", "--python", python, "--kernel", "gemm"]) == 0
    captured = capsys.readouterr()
    assert "\\x1b]0;owned\\x07" in captured.out
    assert "\x1b" not in captured.out and "\x1b" not in captured.err


def test_an_unwritable_data_dir_keeps_the_results_one_line_and_exit_1(cli, capsys, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("PTH_TOP_DATA_DIR", str(blocker / "data"))  # under a file: not writable, even for root
    python = canned_child(tmp_path, GOOD_RUN)
    assert cli(["bench", "--python", python, "--kernel", "gemm", "--json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["rows"][0]["kernel"] == "gemm"  # printed before the save was tried
    assert f"could not save the run in the data dir: {blocker}/data/bench-runs cannot be made: {blocker} is a file, " \
           "not a directory" in captured.err
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("argv, message", [
    (["--python", ""], "interpreter path is empty"),
    (["--python", "/" + LONG_NAME], "File name too long"),
    (["--python", LONG_PATH], "File name too long"),
    (["--python", "/nonexistent/python"], "does not exist"),
    (["--disk-dir", "/tmp/" + LONG_NAME], "File name too long"),
    (["--out", "/tmp/" + LONG_NAME], "File name too long"),
    (["--out", ""], "empty path"),
])
def test_odd_paths_are_exit_2_and_leave_the_data_dir_alone(cli, capsys, argv, message):
    assert cli(["bench", "--kernel", "gemm", *argv]) == 2
    assert message in one_line_error(capsys)
    assert not user_data_dir().exists()


def test_out_onto_a_symlink_a_directory_or_a_folder_name_is_refused_before_running(cli, capsys, tmp_path):
    target = tmp_path / "real.json"
    target.write_text("OLD")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    folder = tmp_path / "folder"
    folder.mkdir()
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "gone")
    fifo = tmp_path / "fifo"  # stands for /dev/null, which root would otherwise replace with a file
    os.mkfifo(fifo)
    python = canned_child(tmp_path, GOOD_RUN)
    cases = [
        ([str(link), "--force"], "is a symbolic link"),
        ([str(folder)], "is a directory"),
        ([str(folder), "--force"], "is a directory"),
        ([str(tmp_path / "new") + "/"], "names a folder"),
        ([str(blocker / "run.json")], f"{blocker} is a file, not a directory"),
        ([str(dangling / "runs" / "run.json")], f"cannot be made: {dangling} is a dangling symbolic link to "),
        ([str(fifo), "--force"], "is not a regular file (a device, FIFO or socket); not written over"),
    ]
    for out, message in cases:
        assert cli(["bench", "--python", python, "--kernel", "gemm", "--out", *out]) == 2, out
        assert message in one_line_error(capsys)
    assert target.read_text() == "OLD" and not (tmp_path / "new").exists() and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert not bench_runs_dir().exists()  # refused before the run: nothing saved


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_out_into_a_read_only_folder_is_refused(cli, capsys, tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    assert cli(["bench", "--python", canned_child(tmp_path, GOOD_RUN), "--out", str(folder / "run.json")]) == 2
    assert "cannot write in" in one_line_error(capsys)


def test_a_full_disk_leaves_the_old_out_file_intact_and_is_one_line(tmp_path):
    out = tmp_path / "run.json"
    out.write_text("OLD")
    long_note = RESULT_LINE.replace('"note":""', '"note":"' + "n" * 20_000 + '"')
    python = canned_child(tmp_path, [STARTED_LINE, long_note, FINISHED_LINE])

    def limit_file_size() -> None:  # a 16 KiB "disk": the run's JSON does not fit
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024, 16 * 1024))

    done = subprocess.run([sys.executable, "-c", CLI_CODE, "bench", "--python", python, "--kernel", "gemm",
                           "--out", str(out), "--force"], capture_output=True, text=True, timeout=120,
                          preexec_fn=limit_file_size)
    assert done.returncode == 1, done.stderr
    assert out.read_text() == "OLD"
    assert f"cannot write {out}: File too large (the old file is unchanged)" in done.stderr
    assert "Traceback" not in done.stderr and "gemm" in done.stdout


def test_a_relative_data_dir_is_refused_in_one_line_before_anything_runs(cli, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PTH_TOP_DATA_DIR", "runs-here")
    assert cli(["bench", "--python", shell_child(tmp_path, "exec /bin/true"), "--kernel", "gemm"]) == 2
    assert "PTH_TOP_DATA_DIR must be an absolute path (or start with ~/), got 'runs-here'" in one_line_error(capsys)
    assert not (tmp_path / "runs-here").exists()
