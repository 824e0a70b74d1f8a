"""Each alert rule over scripted Snapshots and Events: fires once per episode, re-arms when it clears, waits for_s."""

from __future__ import annotations

from dataclasses import replace

from pth_top.recorder.alert_rules import alert_settings
from pth_top.recorder.alerts import AlertEvaluator
from pth_top.recorder.event import Event
from pth_top.sensors.model import FilesystemUsage, GpuProcessUse, GpuSample, ProcessSample, Snapshot
from pth_top.units import GIB
from tests.fakes.snapshots import make_snapshot


class Clock:
    def __init__(self) -> None:
        self.now_s = 0.0

    def __call__(self) -> float:
        return self.now_s


def evaluator(rules: dict | None = None, **table):
    """An evaluator with only the given rules on (the others off), and its clock."""
    every = ("gpu_temperature", "gpu_memory", "xid", "ecc", "throttle", "gpu_idle", "gpu_lost", "disk", "memory",
             "process_exit", "gpu_stuck", "gpu_straggler")
    chosen = {name: {"enabled": False} for name in every}
    for name, settings in (rules or {}).items():
        chosen[name] = {"enabled": True, **settings}
    clock = Clock()
    return AlertEvaluator(alert_settings({"rules": chosen, **table}), clock), clock


def with_gpu(**fields) -> Snapshot:
    snapshot = make_snapshot(gpu_count=1, process_count=3)
    return replace(snapshot, gpus=(replace(snapshot.gpus[0], **fields),))


def run(evaluate: AlertEvaluator, clock: Clock, steps, events_at=None, every_s: float = 10.0):
    """Step through `steps` (snapshots), `every_s` apart; the alerts' rule names per step."""
    fired = []
    for number, snapshot in enumerate(steps):
        events = (events_at or {}).get(number, [])
        alerts = evaluate.step(snapshot, events)
        assert all(alert.kind == "alert" for alert in alerts)
        fired.append([alert.evidence["rule"] for alert in alerts])
        clock.now_s += every_s
    return fired


def test_temperature_waits_for_its_duration_fires_once_and_rearms_below_the_clear_mark():
    evaluate, clock = evaluator({"gpu_temperature": {"above_c": 85, "clear_below_c": 80, "for_s": 30}})
    temps = [70, 86, 90, 91, 92, 93, 84, 82, 79, 88, 88, 88, 88]
    fired = run(evaluate, clock, [with_gpu(temperature_c=float(t)) for t in temps])
    # Hot from step 1: 30 s later (step 4) one alert; still hot or in the hysteresis band: nothing;
    # below 80 at step 8 re-arms; hot again from step 9, fires at step 12.
    assert [bool(step) for step in fired] == [False] * 4 + [True] + [False] * 7 + [True]


def test_a_dip_below_the_threshold_before_firing_restarts_the_duration():
    evaluate, clock = evaluator({"gpu_temperature": {"for_s": 20}})
    temps = [90, 90, 70, 90, 90, 90]
    fired = run(evaluate, clock, [with_gpu(temperature_c=float(t)) for t in temps])
    assert [bool(step) for step in fired] == [False, False, False, False, False, True]


def test_temperature_alert_names_the_gpu_and_the_rule():
    evaluate, clock = evaluator({"gpu_temperature": {"for_s": 0}})
    (alert,) = evaluate.step(with_gpu(temperature_c=95.0))
    assert alert.gpu_index == 0 and alert.gpu_uuid == "GPU-00000000"
    assert alert.evidence["rule"] == "gpu_temperature" and alert.evidence["host"] == "trainbox"
    assert "95 C" in alert.message and alert.severity == "warning"


def test_gpu_memory_fraction_with_hysteresis():
    evaluate, clock = evaluator({"gpu_memory": {"above_fraction": 0.9, "clear_below_fraction": 0.8, "for_s": 0}})
    used = [0.5, 0.95, 0.85, 0.95, 0.7, 0.92]
    fired = run(evaluate, clock, [with_gpu(memory_used_bytes=int(u * 80 * GIB)) for u in used])
    assert [bool(step) for step in fired] == [False, True, False, False, False, True]


def test_throttle_counts_only_the_chosen_reasons_and_lasts():
    evaluate, clock = evaluator({"throttle": {"reasons": ["thermal (HW)"], "for_s": 15}})
    reasons = [(), ("power cap",), ("power cap",), ("thermal (HW)",), ("thermal (HW)", "power cap"),
               ("thermal (HW)",), ("thermal (HW)",), (), ("thermal (HW)",), ("thermal (HW)",), ("thermal (HW)",)]
    fired = run(evaluate, clock, [with_gpu(throttle_reasons=r) for r in reasons])
    assert [bool(step) for step in fired] == [False] * 5 + [True] + [False] * 4 + [True]


def hung(util: float, holder: bool = True) -> Snapshot:
    snapshot = with_gpu(utilization_percent=util)
    process = ProcessSample(pid=4242, ppid=1, user="alice", cpu_percent=0.0, memory_percent=1.0, rss_bytes=GIB,
                            state="sleeping", start_time_s=500.0, command="python train.py --token s3cret",
                            name="python", gpu_uses=(GpuProcessUse(0, 4 * GIB, "compute"),) if holder else ())
    return replace(snapshot, processes=(process,))


def test_gpu_idle_while_a_process_holds_it_is_a_hung_job():
    evaluate, clock = evaluator({"gpu_idle": {"below_percent": 5, "for_s": 60}})
    steps = [hung(90)] + [hung(1)] * 7 + [hung(50)] + [hung(0, holder=False)] * 8
    fired = run(evaluate, clock, steps)
    assert [index for index, step in enumerate(fired) if step] == [7]
    evaluate, clock = evaluator({"gpu_idle": {"for_s": 0}})
    (alert,) = evaluate.step(hung(1))
    assert alert.evidence["pids"] == [4242] and "s3cret" not in alert.message


def test_gpu_lost_fires_once_and_again_after_it_came_back():
    evaluate, clock = evaluator({"gpu_lost": {}})
    lost = [False, True, True, False, True]
    fired = run(evaluate, clock, [with_gpu(lost=flag) for flag in lost])
    assert fired == [[], ["gpu_lost"], [], [], ["gpu_lost"]]


def xid(gpu_index: int = 0, severity: str = "critical") -> Event:
    return Event(1000.0, "xid", severity, f"GPU {gpu_index}: Xid 79: fallen off the bus", gpu_index,
                 f"GPU-{gpu_index:08d}", evidence={"xid": 79})


def test_xid_events_one_alert_per_burst_per_gpu_again_after_the_quiet_time():
    evaluate, clock = evaluator({"xid": {"quiet_s": 60}})
    plain = make_snapshot(gpu_count=2, process_count=2)
    events = {0: [xid(0), xid(0), xid(1)], 1: [xid(0)], 3: [xid(0)], 10: [xid(0)]}
    fired = run(evaluate, clock, [plain] * 11, events)
    # Step 0: one per GPU; steps 1 and 3 within 60 s of the last Xid on GPU 0; step 10 after 70 quiet seconds.
    assert fired == [["xid", "xid"], [], [], [], [], [], [], [], [], [], ["xid"]]
    evaluate, _ = evaluator({"xid": {}})
    (alert,) = evaluate.step(plain, [xid(1)])
    assert alert.gpu_index == 1 and alert.evidence["xid"] == 79 and alert.evidence["event"] == "xid"
    assert alert.severity == "critical" and "Xid 79" in alert.message


def test_ecc_and_row_remap_events_alert_and_other_events_do_not():
    evaluate, clock = evaluator({"ecc": {}, "xid": {}})
    plain = make_snapshot(gpu_count=1, process_count=2)
    ecc = Event(1000.0, "ecc", "critical", "GPU 0: uncorrected ECC errors 0 -> 2", 0, "GPU-00000000")
    remap = Event(1000.0, "row_remap", "warning", "GPU 0: row remap pending", 0, "GPU-00000000")
    other = Event(1000.0, "throttle_start", "warning", "GPU 0 throttling", 0, "GPU-00000000")
    assert [a.evidence["rule"] for a in evaluate.step(plain, [other, ecc])] == ["ecc"]
    assert evaluate.step(plain, [remap]) == []  # the same burst on the same GPU
    fresh, _ = evaluator({"ecc": {}})
    assert [a.severity for a in fresh.step(plain, [remap])] == ["warning"]


def with_disk(free_gib: float, total_gib: float = 1000.0) -> Snapshot:
    used = int((total_gib - free_gib) * GIB)
    return replace(make_snapshot(process_count=2),
                   filesystems=(FilesystemUsage("/data", "/dev/sda1", "xfs", int(total_gib * GIB), used,
                                                int(free_gib * GIB)),))


def test_disk_fraction_or_bytes_and_rearm_with_a_margin():
    evaluate, clock = evaluator({"disk": {"free_below_fraction": 0.05, "free_below_bytes": 0}})
    free = [100, 40, 30, 55, 61, 45]  # 5% of 1000 GiB is 50; re-armed at 60 (margin 1.2)
    assert [bool(step) for step in run(evaluate, clock, [with_disk(f) for f in free])] == \
        [False, True, False, False, False, True]
    evaluate, clock = evaluator({"disk": {"free_below_fraction": 0, "free_below_bytes": 10 * GIB}})
    assert [bool(step) for step in run(evaluate, clock, [with_disk(f) for f in (20, 9, 11, 13, 9)])] == \
        [False, True, False, False, True]
    evaluate, _ = evaluator({"disk": {"mountpoints": ["/"]}})
    assert evaluate.step(with_disk(1)) == []


def with_ram(available_gib: float) -> Snapshot:
    snapshot = make_snapshot(process_count=2)
    return replace(snapshot, memory=replace(snapshot.memory, available_bytes=int(available_gib * GIB)))


def test_ram_available_below_a_fraction_for_a_while():
    evaluate, clock = evaluator({"memory": {"available_below_fraction": 0.1, "for_s": 20}})
    available = [30, 5, 5, 5, 5, 7, 8, 5, 5, 5]  # of 64 GiB: 6.4 GiB is 10%, re-armed at 7.68
    fired = run(evaluate, clock, [with_ram(a) for a in available])
    assert [index for index, step in enumerate(fired) if step] == [3, 9]


def process(pid: int, name: str, command: str, start_s: float = 900.0) -> ProcessSample:
    return ProcessSample(pid=pid, ppid=1, user="bob", cpu_percent=1.0, memory_percent=1.0, rss_bytes=GIB,
                         state="running", start_time_s=start_s, command=command, name=name)


def with_processes(*processes: ProcessSample) -> Snapshot:
    return replace(make_snapshot(process_count=1), processes=processes, timestamp_s=4500.0)


def test_a_watched_job_exiting_alerts_once_by_name_or_command_line():
    evaluate, clock = evaluator({"process_exit": {"patterns": ["train\\.py", "^vllm$"]}})
    trainer = process(10, "python", "python train.py --api-key sk-secret")
    server = process(11, "vllm", "vllm serve")
    other = process(12, "bash", "bash")
    steps = [with_processes(trainer, server, other), with_processes(server, other), with_processes(other),
             with_processes(other)]
    alerts = [evaluate.step(snapshot) for snapshot in steps]
    assert [[a.pid for a in step] for step in alerts] == [[], [10], [11], []]
    assert "python" in alerts[1][0].message and "sk-secret" not in alerts[1][0].message
    assert "60 min" in alerts[1][0].message  # ran from 900 s to 4500 s


def test_a_reused_pid_is_a_new_process():
    evaluate, _ = evaluator({"process_exit": {"patterns": ["train"]}})
    evaluate.step(with_processes(process(10, "train", "train")))
    (alert,) = evaluate.step(with_processes(process(10, "train", "train", start_s=4000.0)))
    assert alert.pid == 10
    assert evaluate.step(with_processes()) != []  # the new one is watched too


def test_a_process_that_execs_into_a_watched_job_is_watched():
    evaluate, _ = evaluator({"process_exit": {"patterns": ["train\\.py"]}})
    evaluate.step(with_processes(process(10, "bash", "bash run.sh")))
    evaluate.step(with_processes(process(10, "python", "python train.py")))
    (alert,) = evaluate.step(with_processes())
    assert alert.pid == 10 and "(python)" in alert.message


def test_no_patterns_watch_nothing_and_alerts_off_is_silent():
    evaluate, _ = evaluator({"process_exit": {}})
    evaluate.step(with_processes(process(10, "train", "train")))
    assert evaluate.step(with_processes()) == []
    evaluate, _ = evaluator({"gpu_temperature": {"for_s": 0}}, enabled=False)
    assert evaluate.step(with_gpu(temperature_c=120.0)) == []


def test_defaults_are_on_for_heat_health_and_space():
    clock = Clock()
    evaluate = AlertEvaluator(alert_settings({}), clock)
    hot_full = replace(with_disk(1), gpus=(replace(make_snapshot(gpu_count=1).gpus[0], temperature_c=95.0),))
    assert [a.evidence["rule"] for a in evaluate.step(hot_full)] == ["disk"]
    clock.now_s = 61.0
    assert [a.evidence["rule"] for a in evaluate.step(hot_full)] == ["gpu_temperature"]
    assert [a.evidence["rule"] for a in evaluate.step(hot_full, [xid()])] == ["xid"]


def test_a_gpu_that_leaves_ends_its_episode():
    evaluate, clock = evaluator({"gpu_temperature": {"for_s": 0}})
    hot = with_gpu(temperature_c=95.0)
    assert evaluate.step(hot)
    assert evaluate.step(replace(hot, gpus=())) == []
    assert evaluate.step(hot)  # came back hot: a new episode


def test_hostile_names_are_printable_in_the_alert():
    evaluate, _ = evaluator({"gpu_temperature": {"for_s": 0}})
    gpu: GpuSample = with_gpu(temperature_c=95.0, name="evil\x1b]0;pwned\x07").gpus[0]
    (alert,) = evaluate.step(replace(make_snapshot(gpu_count=1), gpus=(gpu,)))
    assert "\x1b" not in alert.message and "\x07" not in alert.message
