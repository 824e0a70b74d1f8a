"""pth-top: one import name over the repository's folders (`pth_top.tui` is `tui/`, and so on).

The mapping is declared once, in pyproject.toml's package-dir; this package itself holds only stdlib-only
base modules every layer may import (`text`, `units`).
"""

__version__ = "0.1.0"
