"""Read TOML with line numbers for error messages (tomllib reports only parse errors by line)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from pth_top.configs.errors import ConfigFileError

_PARSE_LINE = re.compile(r"\(at line (\d+), column \d+\)")


def read_toml(path: str | Path) -> tuple[dict[str, Any], str]:
    """Parse a TOML file; any failure is a ConfigFileError naming the file (and line for syntax errors)."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigFileError("no such file", path=source) from None
    except IsADirectoryError:
        raise ConfigFileError("is a directory, not a TOML file", path=source) from None
    except UnicodeDecodeError:
        raise ConfigFileError("not UTF-8 text", path=source) from None
    except OSError as error:
        raise ConfigFileError(f"cannot read: {error.strerror or error}", path=source) from None
    return parse_toml(text, source), text


def parse_toml(text: str, path: str | Path | None = None) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        match = _PARSE_LINE.search(message)
        reason = "malformed TOML: " + _PARSE_LINE.sub("", message).strip()
        raise ConfigFileError(reason, path=path, line=int(match.group(1)) if match else None) from None


def line_of_key(text: str, key: str, start_line: int = 1) -> int | None:
    """The first line at or after `start_line` that assigns `key` (a bare key, possibly dotted-last)."""
    pattern = re.compile(rf"^\s*(?:[\w.-]+\.)?{re.escape(key)}\s*=")
    for number, line in enumerate(text.splitlines()[start_line - 1:], start=start_line):
        if pattern.match(line):
            return number
    return None


def line_of_table(text: str, table: str, occurrence: int = 0) -> int | None:
    """The line of the `occurrence`-th `[table]` or `[[table]]` header (0-based)."""
    pattern = re.compile(rf"^\s*\[\[?\s*{re.escape(table)}\s*\]\]?\s*(#.*)?$")
    seen = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            if seen == occurrence:
                return number
            seen += 1
    return None


def line_of_key_in_table(text: str, table: str, key: str, occurrence: int = 0) -> int | None:
    start = line_of_table(text, table, occurrence)
    if start is None:
        return line_of_key(text, key)
    return line_of_key(text, key, start) or start
