"""Torch benchmarks in three parts, so the dashboard never imports torch:

- `protocol`, `run_request` and `catalog` (stdlib only): the JSON-lines events, the run request, the kernels'
  names and units;
- `child`: runs in the measured interpreter (stdlib + torch), started as `python -m pth_top.benches`
  or loaded there by path through the one bootstrap in `client.spawn`;
- `client`: pth-top's side (spawn, fold events into runs, peaks, saved runs, result rows).
"""
