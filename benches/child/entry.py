"""The child's command line: `run` (benchmarks, JSON-lines events) or `probe` (one JSON object)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv.pop(0) if argv and not argv[0].startswith("-") else "run"
    if command == "run":
        from pth_top.benches.child.runner import main as run_main

        return run_main(argv)
    if command == "probe":
        from pth_top.benches.child.probe import main as probe_main

        return probe_main(argv)
    print(f"python -m pth_top.benches: unknown command {command!r} (expected run or probe)", file=sys.stderr)
    return 2
