"""The Doctor screen in a Pilot test: grouped findings, the selected one explained, `r` re-runs."""

from __future__ import annotations

from textual.app import App
from textual.widgets import OptionList, Static

from pth_top.tui.screens.doctor import DoctorScreen
from tests.fakes.doctor_inputs import cuda_probe_report, fake_nvml, healthy_gpu_values, make_context
from tests.waiting import wait_until


class DoctorTestApp(App):
    def __init__(self, context_factory) -> None:
        super().__init__()
        self.context_factory = context_factory

    def on_mount(self) -> None:
        self.push_screen(DoctorScreen(context_factory=self.context_factory))


def _rendered(widget: Static) -> str:
    return str(widget.render())


async def _wait_for_findings(pilot, screen: DoctorScreen, count: int = 1) -> None:
    await wait_until(pilot, lambda: screen._run_number >= count and not screen.running and screen.findings,
                     what=f"doctor run {count} to finish")


async def test_findings_are_grouped_and_the_first_problem_is_explained(tmp_path):
    runs = []

    def context_factory(load_seconds):
        runs.append(load_seconds)
        nvml = fake_nvml(healthy_gpu_values(nvmlDeviceGetPersistenceMode=0))
        return make_context(tmp_path / f"run{len(runs)}", nvml_module=nvml, probe=cuda_probe_report())

    app = DoctorTestApp(context_factory)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, DoctorScreen)
        await _wait_for_findings(pilot, screen)
        option_list = screen.query_one("#doctor-findings", OptionList)
        prompts = [str(option_list.get_option_at_index(i).prompt) for i in range(option_list.option_count)]
        assert [p for p in prompts if p in ("GPU & driver", "Host", "Torch")] == ["GPU & driver", "Host", "Torch"]
        detail = _rendered(screen.query_one("#doctor-detail", Static))
        assert "Persistence mode [GPU 0 (NVIDIA H100 PCIe)]  WARN" in detail
        assert "Fix: sudo nvidia-smi -i 0 -pm 1" in detail
        status = _rendered(screen.query_one("#doctor-status", Static))
        assert "1 warn" in status and "0 fail" in status

        await pilot.press("down")
        detail_widget = screen.query_one("#doctor-detail", Static)
        await wait_until(pilot, lambda: "Persistence mode" not in _rendered(detail_widget),
                         what="the next finding explained")

        await pilot.press("r")
        await _wait_for_findings(pilot, screen, count=2)
        await pilot.press("l")
        await _wait_for_findings(pilot, screen, count=3)
        assert runs == [0, 0, 5.0]


async def test_a_context_that_cannot_be_built_is_reported_not_raised(tmp_path):
    def broken_factory(load_seconds):
        raise PermissionError("no access to /sys")

    app = DoctorTestApp(broken_factory)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        status = screen.query_one("#doctor-status", Static)
        failure = "Checks could not run: PermissionError: no access to /sys"
        await wait_until(pilot, lambda: failure in _rendered(status), what="the failure on the status line")
        assert not screen.running


async def test_without_a_driver_the_gpu_group_is_one_row(tmp_path):
    from pth_top.doctor import gpu_checks, gpu_state_checks
    from pth_top.doctor.registry import checks_in
    from tests.fakes.doctor_inputs import no_driver_nvml

    app = DoctorTestApp(
        lambda load_seconds: make_context(tmp_path, nvml_module=no_driver_nvml(), probe=cuda_probe_report())
    )
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await _wait_for_findings(pilot, screen)
        option_list = screen.query_one("#doctor-findings", OptionList)
        gpu_row = str(option_list.get_option_at_index(1).prompt)
        count = len(checks_in(gpu_checks)) + len(checks_in(gpu_state_checks))
        assert gpu_row == f"- {count} checks not applicable: no NVIDIA driver (NVML library not found)"
        option_list.highlighted = 1
        detail = screen.query_one("#doctor-detail", Static)
        await wait_until(pilot, lambda: "Checks: NVIDIA driver, torch CUDA vs driver" in _rendered(detail),
                         what="the collapsed group explained")


async def test_without_a_gpu_loading_the_gpus_is_not_offered(tmp_path):
    from tests.fakes.doctor_inputs import no_driver_nvml

    runs = []

    def context_factory(load_seconds):
        runs.append(load_seconds)
        return make_context(tmp_path / f"run{len(runs)}", nvml_module=no_driver_nvml(), probe=cuda_probe_report())

    app = DoctorTestApp(context_factory)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await _wait_for_findings(pilot, screen)
        assert "GPU load" not in _rendered(screen.query_one("#doctor-status", Static))
        assert all(binding.id != "doctor.rerun_loaded" for binding in (b.binding for b in app.active_bindings.values()))
        await pilot.press("l")
        await pilot.press("r")
        await _wait_for_findings(pilot, screen, count=2)
        assert runs == [0, 0]


async def test_d_opens_the_doctor_from_the_monitor_and_escape_goes_back(tmp_path, monkeypatch):
    from pth_top.tui.app import PthTopApp
    from tests.fakes.snapshots import FixedSource, make_snapshot

    monkeypatch.setattr("pth_top.tui.screens.doctor._live_context",
                        lambda load_seconds: make_context(tmp_path, probe=cuda_probe_report()))
    app = PthTopApp(source_factory=lambda: FixedSource(make_snapshot(gpu_count=1)))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, DoctorScreen), what="the doctor screen")
        await _wait_for_findings(pilot, app.screen)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.current_mode == "monitor", what="the monitor back")


async def test_closing_the_screen_kills_a_probe_that_is_still_running(tmp_path):
    from pth_top.doctor.live import live_context
    from tests.fakes.doctor_inputs import alive, gone_soon, slow_interpreter

    python, pid_file = slow_interpreter(tmp_path)
    app = DoctorTestApp(lambda load_seconds: live_context(python=python, data_dir=tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: pid_file.exists() and pid_file.read_text().strip(), what="the probe to start")
        pid = int(pid_file.read_text())
        await wait_until(pilot, lambda: screen._running_context is not None, what="the screen to hold the probe")
        assert screen.running and alive(pid)
    assert gone_soon(pid)
