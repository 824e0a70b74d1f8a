"""The torch side: runs inside the measured interpreter, loaded there by path (benches/client/spawn.py).

Imports only the standard library, torch and, of pth-top, `pth_top.benches.protocol`,
`pth_top.benches.run_request` and `pth_top.benches.catalog`: the user's training venv needs nothing else.
"""
