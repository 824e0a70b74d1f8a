"""`pth-top bench` end to end in a subprocess; --python errors; cancel kills the child and its temp file."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pth_top.benches.client.bench_process import BenchProcess
from pth_top.benches.client.spawn import LaunchError, build_command, resolve_python
from pth_top.benches.run_request import RunRequest
from pth_top.configs.paths import bench_runs_dir
from tests.bench.fake_children import CLI_CODE

TINY = ["--scale", "0.01", "--time-cap", "0.05", "--disk-size-mib", "8"]


def test_list_shows_every_kernel(cli, capsys):
    assert cli(["bench", "--list"]) == 0
    out = capsys.readouterr().out
    for name in ("gemm", "conv2d", "membw", "h2d", "amp_step", "max_batch", "disk", "cpu_vs_gpu"):
        assert name in out


@pytest.mark.parametrize("argv, message", [
    (["bench", "--kernel", "nope"], "unknown kernel 'nope'"),
    (["bench", "--device", "gpu0"], "--device must be"),
    (["bench", "--python", "/no/such/python"], "interpreter /no/such/python does not exist"),
])
def test_bad_input_is_one_line_and_exit_2(cli, capsys, argv, message):
    assert cli(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_an_interpreter_without_torch_is_a_one_line_error(cli, capsys, tmp_path):
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import torch"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip("this venv sees a torch (system site-packages)")
    assert cli(["bench", "--python", str(python), "--kernel", "disk", *TINY]) == 2
    err = capsys.readouterr().err
    assert f"torch is not installed for {venv}" in err and err.count("\n") == 1


def test_the_bootstrap_loads_benches_by_path_without_our_sys_path(tmp_path):
    command = build_command("/usr/bin/python3", ["run", "--list-devices"])
    assert command[:2] == ["/usr/bin/python3", "-c"] and Path(command[3]).name == "benches"
    entry = "from pth_top.benches.child.entry import main\nsys.exit(main(sys.argv[1:]))\n"
    assert command[2].endswith(entry)
    probe = ("import sys; sys.argv = ['-c', sys.argv[1]];"
             + command[2].replace(entry, "import pth_top.benches as b; print(b.__file__); print(sys.path)"))
    out = subprocess.run([sys.executable, "-I", "-c", probe, command[3]], capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    loaded, path = out.stdout.splitlines()
    assert Path(loaded).parent == Path(command[3])
    entries = {str(Path(entry).resolve()) for entry in ast.literal_eval(path) if entry and not entry.startswith("__")}
    assert str(Path(command[3]).resolve()) not in entries
    assert str(Path(command[3]).parent.resolve()) not in entries


def test_resolve_python_rejects_folders_and_missing_files(tmp_path):
    with pytest.raises(LaunchError, match="not an executable"):
        resolve_python(str(tmp_path))
    with pytest.raises(LaunchError, match="does not exist"):
        resolve_python(str(tmp_path / "python9"))
    assert resolve_python(None) == sys.executable


@pytest.mark.usefixtures("torch")  # a real child in this interpreter
def test_tiny_run_prints_json_saves_the_run_and_refuses_to_overwrite_out(tmp_path):
    out_file = tmp_path / "run.json"
    argv = ["bench", "--kernel", "disk", "--kernel", "gemm", *TINY, "--disk-dir", str(tmp_path),
            "--json", "--out", str(out_file)]
    done = subprocess.run([sys.executable, "-c", CLI_CODE, *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert run["format"] == "pth-top-bench-run" and {row["kernel"] for row in run["rows"]} == {"disk", "gemm"}
    assert all(row["percent_of_peak"] is None or row["percent_of_peak"] > 0 for row in run["rows"])
    assert json.loads(out_file.read_text())["rows"] == run["rows"]
    assert len(list(bench_runs_dir().glob("bench-*.json"))) == 1
    assert "gemm cpu fp32 1 thread" in done.stderr  # progress lines go to stderr
    again = subprocess.run([sys.executable, "-c", CLI_CODE, *argv], capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "already exists" in again.stderr


@pytest.mark.usefixtures("torch")  # a real child in this interpreter
async def test_cancel_ends_the_child_on_sigterm_and_leaves_no_temp_file(tmp_path):
    request = RunRequest(kernels=("disk",), disk_dir=str(tmp_path), disk_size_mib=4096, scale=0.01)
    process = BenchProcess.for_request(None, request)
    await process.start()
    saw_write = False
    async for event in process.events():
        if event.kind == "progress" and event.get("message") == "write" and event.get("fraction", 0) > 0:
            saw_write = True
            break
    assert saw_write
    assert list(tmp_path.glob(".pth-top-bench-*.tmp")), "the temp file should exist mid-write"
    code = await process.cancel()
    assert code is not None
    assert not list(tmp_path.glob(".pth-top-bench-*")), "the child removes its temp file before it exits"


def test_a_torch_only_interpreter_runs_the_benchmarks_without_pth_top_installed(tmp_path, torch):
    venv = tmp_path / "training-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    ours = Path(torch.__file__).resolve().parent.parent
    for name in ("torch", "torchgen", "functorch", "typing_extensions.py", "filelock", "sympy", "mpmath",
                 "networkx", "jinja2", "markupsafe", "fsspec"):
        if (ours / name).exists():
            (site / name).symlink_to(ours / name)
    probe = subprocess.run([str(python), "-c", "import torch\ntry:\n import pth_top\nexcept ImportError: pass\n"
                            "else: raise SystemExit('pth-top leaks into this venv')"],
                           capture_output=True, cwd=tmp_path)
    if probe.returncode != 0:
        pytest.skip(f"cannot build a torch-only venv here: {probe.stderr.decode()[-200:]}")
    done = subprocess.run([sys.executable, "-c", CLI_CODE, "bench", "--python", str(python), "--kernel", "disk",
                           *TINY, "--disk-dir", str(tmp_path), "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert run["metadata"]["python_executable"] == str(python)
    assert [row["variant"] for row in run["rows"]] == ["sequential write", "sequential read"]
