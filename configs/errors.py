"""A user-facing error about a file: names the file, the line (when known) and the key."""

from __future__ import annotations

from pathlib import Path

from pth_top.text import printable

# The longest message a bad file can produce: a hostile key or value is cut, never printed whole.
MESSAGE_LIMIT_CHARS = 1600


class ConfigFileError(ValueError):
    """Bad content in a TOML file (or bad answers): `file:line: key: reason`."""

    def __init__(self, reason: str, *, path: str | Path | None = None, line: int | None = None, key: str | None = None):
        self.reason = reason
        self.path = Path(path) if path is not None else None
        self.line = line
        self.key = key
        super().__init__(self.describe())

    def describe(self) -> str:
        """One terminal-safe line: control characters in the path, key or reason are shown as escapes."""
        where = printable(self.path, limit=1000) if self.path is not None else "<answers>"
        if self.line is not None:
            where += f":{self.line}"
        if self.key:
            return printable(f"{where}: {printable(self.key, limit=120)}: {self.reason}", limit=MESSAGE_LIMIT_CHARS)
        return printable(f"{where}: {self.reason}", limit=MESSAGE_LIMIT_CHARS)


def shown(value: object, limit: int = 60) -> str:
    """A value quoted for an error message: repr, terminal-safe, cut to `limit` characters."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int over 4,300 digits, or a nesting too deep to repr
        text = f"<{type(value).__name__}>"
    return printable(text, limit=limit)
