from dataclasses import replace

from pth_top.sensors.model import GpuProcessUse, ProcessSample
from pth_top.sensors.na import NA
from pth_top.tui.process_view import COLUMNS, ProcessView, process_cells, table_rows, visible_columns, visible_lines


def proc(pid, ppid=1, cpu=0.0, command="cmd", user="alice", gpu_bytes=None, **kwargs):
    uses = (GpuProcessUse(0, gpu_bytes, "compute"),) if gpu_bytes is not None else ()
    return ProcessSample(pid=pid, ppid=ppid, user=user, cpu_percent=cpu, memory_percent=1.0, rss_bytes=1024,
                         state="sleeping", start_time_s=0.0, command=command, gpu_uses=uses, **kwargs)


PROCESSES = (
    proc(1, 0, 1.0, "/sbin/init", "root"),
    proc(10, 1, 50.0, "python train.py", gpu_bytes=4 * 1024**3),
    proc(11, 10, 80.0, "python worker"),
    proc(12, 10, 20.0, "python worker"),
    proc(20, 1, 5.0, "sshd: bob", "bob"),
)


def pids(lines):
    return [line.process.pid for line in lines]


def test_default_sort_is_cpu_descending_with_pid_ties():
    processes = PROCESSES + (proc(30, 1, 80.0),)
    assert pids(visible_lines(processes, ProcessView())) == [11, 30, 10, 12, 20, 1]


def test_sorting_same_column_again_inverts():
    view = ProcessView().sorted_by("pid")
    assert not view.descending
    assert pids(visible_lines(PROCESSES, view)) == [1, 10, 11, 12, 20]
    assert pids(visible_lines(PROCESSES, view.sorted_by("pid"))) == [20, 12, 11, 10, 1]


def test_gpu_memory_sort_puts_processes_without_gpu_last():
    lines = visible_lines(PROCESSES, ProcessView().sorted_by("gpu_mem"))
    assert pids(lines)[0] == 10


def test_filter_matches_command_user_or_exact_pid():
    assert pids(visible_lines(PROCESSES, ProcessView(filter_text="WORKER"))) == [11, 12]
    assert pids(visible_lines(PROCESSES, ProcessView(filter_text="bob"))) == [20]
    assert pids(visible_lines(PROCESSES, ProcessView(filter_text="12"))) == [12]


def test_filter_matches_the_escapes_the_table_shows_for_control_characters():
    processes = PROCESSES + (proc(40, 1, command="clip2\x1b]52;c;cHduZWQ=\x1b\\tail"), proc(41, 1, command="C:\\x1b"))
    assert pids(visible_lines(processes, ProcessView(filter_text="clip2\\x1b]52"))) == [40]
    assert pids(visible_lines(processes, ProcessView(filter_text="c:\\x1b"))) == [41], "a real backslash still matches"


def test_tree_nests_children_under_parents_sorted_among_siblings():
    lines = visible_lines(PROCESSES, ProcessView(tree=True))
    assert pids(lines) == [1, 10, 11, 12, 20]
    prefixes = {line.process.pid: line.tree_prefix for line in lines}
    assert prefixes[1] == ""
    assert prefixes[10] == "├─ "
    assert prefixes[11] == "│  ├─ "
    assert prefixes[12] == "│  └─ "
    assert prefixes[20] == "└─ "


def test_tree_survives_cycles_and_orphans():
    looped = (proc(5, 6), proc(6, 5), proc(7, 999))
    assert sorted(pids(visible_lines(looped, ProcessView(tree=True)))) == [7]


def test_cycle_moves_through_columns_and_wraps():
    view = ProcessView(sort_column="command")
    assert view.cycled(1).sort_column == "pid"
    assert view.cycled(-1).sort_column == "container"
    assert view.cycled(-1, visible_columns(True)).sort_column == "time"


def test_cycle_without_gpus_never_stops_on_a_hidden_gpu_column():
    shown = visible_columns(show_gpu_columns=False)
    visited, view = [], ProcessView()
    for _ in range(2 * len(COLUMNS)):
        view = view.cycled(1, shown)
        visited.append(view.sort_column)
    assert set(visited) == {column.key for column in shown}
    assert not {"gpu_mem", "gpu", "gpu_util", "container"} & set(visited)
    assert ProcessView(sort_column="gpu_mem").cycled(-1, shown).sort_column == "command", "from a hidden column: an end"


def test_columns_shown_follow_what_the_machine_has():
    keys = lambda columns: [column.key for column in columns]  # noqa: E731
    assert "gpu_util" not in keys(visible_columns(True)), "SM% only where a GPU reports it"
    assert "gpu_util" in keys(visible_columns(True, show_gpu_util=True))
    assert "gpu_util" not in keys(visible_columns(False, show_gpu_util=True))
    assert keys(visible_columns(False, show_container=True))[-2:] == ["container", "command"]


def test_gpu_only_shows_processes_with_a_gpu_context_in_flat_and_tree_views():
    for tree in (False, True):
        assert pids(visible_lines(PROCESSES, ProcessView(gpu_only=True, tree=tree))) == [10]


def test_cells_show_sm_percent_na_where_unsupported_and_container_labels():
    columns = visible_columns(True, show_gpu_util=True, show_container=True)
    at = {column.key: position for position, column in enumerate(columns)}
    uses = (GpuProcessUse(0, 1024, "compute", sm_util_percent=37.0),
            GpuProcessUse(1, 1024, "compute", sm_util_percent=50.0))
    busy = replace(PROCESSES[1], gpu_uses=uses, container="docker:3f4e5a6b7c8d")
    cells = process_cells(visible_lines([busy], ProcessView())[0], columns)
    assert cells[at["gpu_util"]].plain == "87" and cells[at["container"]].plain == "3f4e5a6b7c8d"
    mig = replace(PROCESSES[1], container="slurm:4242")
    cells = process_cells(visible_lines([mig], ProcessView())[0], columns)
    assert cells[at["gpu_util"]].plain == "N/A" and cells[at["container"]].plain == "job 4242"
    pod = replace(PROCESSES[2], container="pod:1b2c3d4e-aaaa-bbbb-cccc-000000000000")
    cells = process_cells(visible_lines([pod], ProcessView())[0], columns)
    assert cells[at["gpu_util"]].plain == "" and cells[at["container"]].plain.startswith("pod 1b2c3d4e")


def test_cells_show_gpu_memory_only_for_gpu_processes_and_keep_markup_literal():
    gpu_cells = process_cells(visible_lines([PROCESSES[1]], ProcessView())[0])
    assert gpu_cells[5].plain == "4.0G" and "magenta" in str(gpu_cells[0].style)
    plain_cells = process_cells(visible_lines([replace(PROCESSES[2], command="x [/] [bold]")], ProcessView())[0])
    assert plain_cells[5].plain == ""
    assert plain_cells[-1].plain.endswith("x [/] [bold]")


def test_unknown_gpu_memory_prints_na():
    cells = process_cells(visible_lines([proc(3, gpu_bytes=NA)], ProcessView())[0])
    assert cells[5].plain == "N/A"


def test_rows_are_keyed_by_pid():
    assert [key for key, _ in table_rows(PROCESSES, ProcessView().sorted_by("pid"))] == ["1", "10", "11", "12", "20"]


def test_kernel_threads_are_hidden_unless_asked_for_in_flat_and_tree_views():
    kernel = (proc(2, 0, 3.0, "[kthreadd]", "root", is_kernel_thread=True),
              proc(3, 2, 90.0, "[kworker/0:1]", "root", is_kernel_thread=True))
    processes = PROCESSES + kernel
    for tree in (False, True):
        assert not {2, 3} & set(pids(visible_lines(processes, ProcessView(tree=tree))))
        assert {2, 3} <= set(pids(visible_lines(processes, ProcessView(tree=tree, show_kernel_threads=True))))
    assert pids(visible_lines(processes, ProcessView(show_kernel_threads=True)))[0] == 3


def test_every_sort_column_breaks_ties_by_pid_in_both_directions_whatever_the_input_order():
    # Four processes equal in every column but PID: the order must not depend on how /proc listed them.
    twins = tuple(proc(pid, 1, 5.0, command="same", user="same") for pid in (40, 7, 23, 15))
    for column in (column for column in COLUMNS if column.key != "pid"):  # PID itself has no ties
        for descending in (False, True):
            view = ProcessView(sort_column=column.key, descending=descending)
            for listing in (twins, twins[::-1]):
                assert pids(visible_lines(listing, view)) == [7, 15, 23, 40], (column.key, descending)
