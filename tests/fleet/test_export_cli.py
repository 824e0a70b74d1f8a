"""`pth-top export` as users run it: bad addresses, busy ports, TLS files, a missing extra; promtool's lint."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import sys
import urllib.error

import pytest

from pth_top.fleet.collector import ExporterCollector, ExportOptions, make_registry
from pth_top.fleet.listen import parse_listen
from pth_top.sensors.nvml import NvmlSession
from pth_top.tui.cli import main
from tests.fakes.gpu_fixtures import enable_mig
from tests.fleet.fixtures import XidQueue, make_exporter_gpus
from tests.fleet.prometheus_tools import ExporterProcess, binary, http_get
from tests.fleet.scraping import parse, promtool_problems, scrape
from tests.sensors.helpers import FakeClock


@pytest.mark.parametrize("text, expected", [
    ("127.0.0.1:9824", ("127.0.0.1", 9824)),
    ("0.0.0.0:0", ("0.0.0.0", 0)),
    ("[::1]:9100", ("::1", 9100)),
])
def test_listen_addresses(text, expected):
    assert parse_listen(text, allow_port_zero=True) == expected


def one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


@pytest.mark.parametrize("listen, words", [
    ("localhost:9824", "must be an IP address"),
    ("127.0.0.1:70000", "port must be a number"),
    ("192.0.2.1:0", "not an address of this machine"),
])
def test_bad_address_exits_2_with_one_line(listen, words, capsys):
    assert main(["export", "--listen", listen]) == 2
    assert words in one_error_line(capsys)


def test_port_in_use_exits_2_with_one_line(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["export", "--listen", f"127.0.0.1:{port}"]) == 2
    assert "already in use" in one_error_line(capsys)


@pytest.mark.parametrize("arguments, words", [
    (["--tls-cert", "c.pem"], "go together"),
    (["--tls-client-ca", "ca.pem"], "needs --tls-cert"),
    (["--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/k.pem"], "TLS file not readable"),
    (["--processes-per-gpu", "0"], "between 1 and 1000"),
])
def test_bad_tls_and_options_exit_2(arguments, words, capsys):
    try:
        code = main(["export", "--listen", "127.0.0.1:0", *arguments])
    except SystemExit as stop:
        code = stop.code
    assert code == 2
    assert words in one_error_line(capsys)


def test_garbage_certificate_exits_2(tmp_path, capsys):
    garbage = tmp_path / "cert.pem"
    garbage.write_text("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n")
    assert main(["export", "--listen", "127.0.0.1:0", "--tls-cert", str(garbage), "--tls-key", str(garbage)]) == 2
    assert "TLS certificate, key or client CA not usable" in one_error_line(capsys)


def test_missing_prometheus_client_says_how_to_install():
    code = ("import sys; sys.modules['prometheus_client'] = None; from pth_top.tui.cli import main; "
            "sys.exit(main(['export']))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "pth-top: pth-top export needs prometheus-client: pip install 'pth-top[export]'")


def test_help_names_the_defaults(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["export", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "127.0.0.1:9824" in out and "--host-metrics" in out and "--tls-client-ca" in out


def test_promtool_accepts_everything_we_serve(tmp_path):
    binary("promtool")
    from tests.sensors.proc_tree import add_process, make_proc_root

    root = make_proc_root(tmp_path / "proc")
    add_process(root, 4242, "python3", ["python3", "train.py"])
    clock = FakeClock()
    queue = XidQueue()
    fake = enable_mig(make_exporter_gpus(8, process_pids={0: [4242]}, xid_queue=queue), 3)
    collector = ExporterCollector(NvmlSession(fake, clock=clock),
                                  ExportOptions(host_metrics=True, proc_root=str(root), reuse_s=0), clock=clock)
    registry = make_registry(collector)
    from pth_top.sensors.xid_events import XidEventWatcher

    collector.xid_watcher = XidEventWatcher(collector.session)
    assert collector.xid_watcher.register(collector.gpu_handles())
    queue.push(1, 79)
    collector.xid_watcher.wait_once(timeout_ms=0)
    result = scrape(registry)
    assert {"pth_top_process_gpu_memory_bytes", "pth_top_gpu_xid_errors_total", "pth_top_mig_memory_used_bytes",
            "pth_top_host_cpu_seconds_total", "pth_top_gpu_throttle_seconds_total"} <= result.names()
    assert promtool_problems(result.text) == ""


def test_promtool_flags_what_it_should():
    """The lint is not a rubber stamp: a percent gauge and a counter without _total are reported."""
    binary("promtool")
    bad = ("# HELP gpu_util_percent x\n# TYPE gpu_util_percent gauge\ngpu_util_percent 50\n"
           "# HELP energy_joules x\n# TYPE energy_joules counter\nenergy_joules 1\n")
    assert "counter" in promtool_problems(bad)


def tls_files(directory) -> dict[str, str]:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    names = {name: str(directory / f"{name}.pem") for name in
             ("ca", "ca-key", "server", "server-key", "client", "client-key")}

    def run(*arguments: str) -> None:
        subprocess.run(["openssl", *arguments], check=True, capture_output=True, timeout=60)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
        "-keyout", names["ca-key"], "-out", names["ca"])
    extension = directory / "san.cnf"
    extension.write_text("subjectAltName=IP:127.0.0.1\n")
    for who in ("server", "client"):
        csr = str(directory / f"{who}.csr")
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={who}", "-keyout", names[f"{who}-key"], "-out", csr)
        run("x509", "-req", "-in", csr, "-CA", names["ca"], "-CAkey", names["ca-key"], "-CAcreateserial",
            "-days", "2", "-extfile", str(extension), "-out", names[who])
    return names


def test_mutual_tls_serves_only_clients_with_a_certificate(tmp_path):
    files = tls_files(tmp_path)
    exporter = ExporterProcess("--tls-cert", files["server"], "--tls-key", files["server-key"],
                               "--tls-client-ca", files["ca"])
    try:
        url = exporter.url.replace("http://", "https://")
        trusted = ssl.create_default_context(cafile=files["ca"])
        with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
            http_get(url, context=trusted)
        trusted.load_cert_chain(files["client"], files["client-key"])
        result = parse(http_get(url, context=trusted).decode())
        assert result.get("pth_top_nvml_up") == 1.0
        assert len(result.series("pth_top_gpu_info")) == 8
    finally:
        assert exporter.stop() == 0

