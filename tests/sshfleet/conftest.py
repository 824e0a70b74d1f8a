"""The SSH lab fixture: real sshd processes on loopback, skipped with the reason when OpenSSH's server is absent."""

from __future__ import annotations

import os

import pytest

from tests.sshfleet.ssh_lab import SKIP_REASON, SshLab, sshd_missing


@pytest.fixture
def lab(tmp_path):
    if sshd_missing():
        pytest.skip(SKIP_REASON)
    if os.geteuid() != 0:
        pytest.skip("the SSH lab logs in as root through its own AuthorizedKeysFile (run as root, as CI does)")
    lab = SshLab(tmp_path)
    lab.start()
    try:
        yield lab
    finally:
        lab.stop()
