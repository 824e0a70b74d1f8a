"""Container and job ids from /proc/PID/cgroup, on lines recorded on real machines (origin beside each),
and the process reader reading each process's cgroup once per PID and start time."""

from __future__ import annotations

import pytest

from pth_top.sensors.cgroups import container_of_cgroup
from pth_top.sensors.processes import ProcfsProcessSource
from tests.sensors.helpers import FakeClock
from tests.sensors.proc_tree import add_process, make_proc_root

GIB = 1024 ** 3


def lines(*items: str) -> str:
    return "\n".join(items) + "\n"


# Recorded /proc/PID/cgroup contents and what the table shows for them.
RECORDED = {
    # neuvector/neuvector share/system/cgroup_test.go TestDockerIDDebian: Docker, cgroup v1, cgroupfs, ids at the root.
    "docker-v1-debian": (lines(
        "10:net_prio:/4f797c539e6c745de61a93ca3ff892358ecbcaccd8414d5db545c38428142970",
        "4:memory:/4f797c539e6c745de61a93ca3ff892358ecbcaccd8414d5db545c38428142970",
        "2:cpu:/4f797c539e6c745de61a93ca3ff892358ecbcaccd8414d5db545c38428142970",
    ), "docker:4f797c539e6c"),
    # neuvector TestDockerIDUbuntu: Docker, cgroup v1, cgroupfs driver (/docker/<id>).
    "docker-v1-ubuntu": (lines(
        "12:name=systemd:/docker/31cb02944da7a12196a193cf0e0f6c226d7c453a1db62e65ba98287593a2ee30",
        "4:memory:/docker/31cb02944da7a12196a193cf0e0f6c226d7c453a1db62e65ba98287593a2ee30",
        "1:cpuset:/docker/31cb02944da7a12196a193cf0e0f6c226d7c453a1db62e65ba98287593a2ee30",
    ), "docker:31cb02944da7"),
    # neuvector TestDockerIDCentOS: Docker, cgroup v1, systemd driver (docker-<id>.scope).
    "docker-v1-centos-systemd": (lines(
        "10:devices:/system.slice/docker-9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d.scope",
        "2:cpuacct,cpu:/system.slice/docker-9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d.scope",
        "1:name=systemd:/system.slice/docker-9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d.scope",
    ), "docker:9ec39b91f3d7"),
    # neuvector TestDockerIDRancherOS: Docker in Docker; the inner container is the process's.
    "docker-in-docker": (lines(
        "8:memory:/docker/a9a5ad238e59234193ee7ec3fcff5e735b3708ea1068826952255b69e3cfa413"
        "/docker/ec08435e04266c5ba381fccbb829f626d11d8ddf5f8f547263c7a2d79ab4787a",
    ), "docker:ec08435e0426"),
    # neuvector TestDockerIDKubepods: Kubernetes, cgroup v1, cgroupfs driver.
    "k8s-v1-cgroupfs": (lines(
        "11:devices:/kubepods/besteffort/pod74ba62da-1a3d-11e7-bb11-080027cb0e22"
        "/cb1eadb7abe3a6545e9856411207073277838e1bdc003337c2f8685faeedc32c",
        "3:rdma:/",
    ), "pod:74ba62da-1a3d-11e7-bb11-080027cb0e22/cb1eadb7abe3"),
    # neuvector TestDockerIDKubepods2: Kubernetes on Docker, systemd driver (pod UID with underscores).
    "k8s-v1-systemd-docker": (lines(
        "11:cpuset:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod045b1e35_7f13_11e7_ac42_0050568ffca0"
        ".slice/docker-b5b6f2da8008be266864f896f93789762b2ce50792114a5c5f2cc3315af0bc70.scope",
    ), "pod:045b1e35-7f13-11e7-ac42-0050568ffca0/b5b6f2da8008"),
    # neuvector TestK8sBottleRocket: Kubernetes on containerd (Bottlerocket), systemd driver.
    "k8s-v1-containerd": (lines(
        "11:cpuset:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-poddd1bf9d1_241d_47f5_8e25_12de83135812"
        ".slice/cri-containerd-f45298cd514d1930c4fe3afc4412e59547f7e3148fddd22ca33cefce046eb830.scope",
    ), "pod:dd1bf9d1-241d-47f5-8e25-12de83135812/f45298cd514d"),
    # neuvector TestK8sProxyProcess: a process in a sub-cgroup of its container (kube-proxy).
    "k8s-v1-sub-cgroup": (lines(
        "11:freezer:/kubepods/besteffort/podf8a694f2-7c08-11e9-98da-000c29077430"
        "/c04e0a88a1de067f25bece337d4dbb897396e0b623c2a65330850fc9823f1903/kube-proxy",
    ), "pod:f8a694f2-7c08-11e9-98da-000c29077430/c04e0a88a1de"),
    # NordicHPC/sonar src/slurm.rs test: "from a Fox compute node on 2025-03-13", Slurm on cgroup v2.
    "slurm-v2": (lines("0::/system.slice/slurmstepd.scope/job_1392969/step_0/user/task_0"), "slurm:1392969"),
    # NordicHPC/sonar src/slurm.rs test ("from some older data"): Slurm on cgroup v1.
    "slurm-v1": (lines("10:devices:/slurm/uid_2101171/job_280678/step_interactive/task_0"), "slurm:280678"),
    # neuvector TestHostProcess: a host process on cgroup v1.
    "host-v1": (lines("13:name=systemd:/", "12:pids:/", "5:memory:/", "1:cpuset:/"), ""),
    # neuvector TestNsEnterProcess: a user's login session on cgroup v1.
    "user-session-v1": (lines("13:name=systemd:/user/1000.user/c2.session", "12:pids:/",
                              "5:memory:/user/1000.user/c2.session"), ""),
    # This build machine (hybrid v1 + v2): a sandbox's memory cgroup named by a 32-hex id, not a container.
    "sandbox-hybrid": (lines("9:name=systemd:/", "4:memory:/process_api/29b49c2bff551380b90ac26933436a23", "0::/"), ""),
}

# Hostile or malformed text: never raises, never invents a container.
MALFORMED = ["", "\n\n", "garbage", "0::", "::::", "0::/docker/not-hex-at-all", "0::/job_12/",
             "0::/docker/" + "a" * 63, "0::/docker/" + "A" * 64, "1:memory:relative/docker/" + "a" * 64,
             "\x00\xff" * 40, "0::/slurm/uid_x/job_12/"]


@pytest.mark.parametrize("case", sorted(RECORDED))
def test_recorded_cgroup_lines(case):
    text, expected = RECORDED[case]
    assert container_of_cgroup(text) == expected


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_cgroup_text_is_no_container(text):
    assert container_of_cgroup(text) == ""


def test_a_pod_cgroup_names_its_container_after_the_pod_uid_and_a_pod_level_path_only_the_pod():
    uid = "74ba62da-1a3d-11e7-bb11-080027cb0e22"
    cgroupfs_v2 = f"0::/kubepods/burstable/pod{uid}/" + "a" * 64
    crio_v2 = f"0::/kubepods.slice/kubepods-pod{uid.replace('-', '_')}.slice/crio-" + "b" * 64 + ".scope"
    assert container_of_cgroup(cgroupfs_v2) == f"pod:{uid}/" + "a" * 12
    assert container_of_cgroup(crio_v2) == f"pod:{uid}/" + "b" * 12
    assert container_of_cgroup(f"0::/kubepods/burstable/pod{uid}\n") == f"pod:{uid}"
    assert container_of_cgroup(f"0::/kubepods/burstable/pod{uid}/not-a-container") == f"pod:{uid}"


def test_other_runtimes_outside_kubernetes_are_containers_not_docker():
    podman = "0::/machine.slice/libpod-" + "c" * 64 + ".scope"
    nerdctl = "0::/default/" + "d" * 64
    assert container_of_cgroup(podman) == "container:" + "c" * 12
    assert container_of_cgroup(nerdctl) == "container:" + "d" * 12
    assert container_of_cgroup("0::/system.slice/docker-" + "e" * 64 + ".scope") == "docker:" + "e" * 12


def test_the_reader_reads_a_cgroup_once_per_process_and_again_for_a_new_process_on_the_pid(tmp_path, monkeypatch):
    root = make_proc_root(tmp_path / "proc")
    trainer = add_process(root, 40, "python", ["python", "train.py"], utime=10)
    (trainer / "cgroup").write_text(RECORDED["slurm-v2"][0])
    kernel = add_process(root, 2, "kthreadd", [], flags=0x00200000)
    (kernel / "cgroup").write_text(RECORDED["docker-v1-ubuntu"][0])
    reads: list[str] = []
    import pth_top.sensors.procfs as procfs

    real_read = procfs.read_small_file
    monkeypatch.setattr(procfs, "read_small_file", lambda path: reads.append(path) or real_read(path))
    clock = FakeClock()
    source = ProcfsProcessSource(str(root), clock)
    rows = {row.pid: row for row in source.rows(GIB).processes}
    assert rows[40].container == "slurm:1392969" and rows[2].container == "", "kernel threads are not read"
    for busy_ticks in (20, 30, 40):
        # A busy process gets a new row each sample; its cgroup is not read again.
        add_process(root, 40, "python", ["python", "train.py"], utime=busy_ticks)
        clock.advance(1.0)
        assert {row.pid: row for row in source.rows(GIB).processes}[40].container == "slurm:1392969"
    assert sum(path.endswith("/cgroup") for path in reads) == 1
    # The PID reused by a process in a Docker container: read again.
    add_process(root, 40, "nginx", ["nginx"], start_ticks=5000)
    (trainer / "cgroup").write_text(RECORDED["docker-v1-centos-systemd"][0])
    clock.advance(1.0)
    assert {row.pid: row for row in source.rows(GIB).processes}[40].container == "docker:9ec39b91f3d7"
    # A process whose cgroup file cannot be read (gone, or hidden by hidepid) has none.
    (trainer / "cgroup").unlink()
    add_process(root, 40, "other", ["other"], start_ticks=6000)
    clock.advance(1.0)
    assert {row.pid: row for row in source.rows(GIB).processes}[40].container == ""
