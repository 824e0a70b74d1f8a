"""A user-facing error about a file: names the file, the line (when known) and the key."""

from __future__ import annotations

from pathlib import Path


class ConfigFileError(ValueError):
    """Bad content in a TOML file (or bad answers): `file:line: key: reason`."""

    def __init__(self, reason: str, *, path: str | Path | None = None, line: int | None = None, key: str | None = None):
        self.reason = reason
        self.path = Path(path) if path is not None else None
        self.line = line
        self.key = key
        super().__init__(self.describe())

    def describe(self) -> str:
        where = str(self.path) if self.path is not None else "<answers>"
        if self.line is not None:
            where += f":{self.line}"
        if self.key:
            return f"{where}: {self.key}: {self.reason}"
        return f"{where}: {self.reason}"
