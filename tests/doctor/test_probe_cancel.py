"""Cancelling the doctor's probe while it is already being ended does not cut the SIGKILL short."""

from __future__ import annotations

import time

import pytest

from pth_top.doctor.probe_runner import PendingProbe, ProbeError
from tests.fakes.doctor_inputs import gone_soon, wait_for_pid


def test_a_cancel_during_the_timeout_clean_up_still_ends_a_probe_that_ignores_sigterm(tmp_path):
    pid_file, term_file = tmp_path / "probe.pid", tmp_path / "got-term"
    script = tmp_path / "stubborn-python"
    # Ignores SIGTERM (notes it), so only the clean-up's SIGKILL can end it.
    script.write_text(f"#!/bin/sh\ntrap 'touch {term_file}' TERM\necho $$ > {pid_file}\n"
                      "while true; do sleep 0.1; done\n")
    script.chmod(0o755)
    probe = PendingProbe(str(script), timeout_s=0.5)
    pid = wait_for_pid(pid_file)
    deadline = time.monotonic() + 20
    while not term_file.exists() and time.monotonic() < deadline:  # the timeout fired: the clean-up sent SIGTERM
        time.sleep(0.01)
    assert term_file.exists(), "the probe's timeout never sent SIGTERM"
    probe.cancel()  # now, inside the clean-up's grace period
    with pytest.raises(ProbeError):
        probe.result()
    assert gone_soon(pid), "the probe outlived its clean-up"
