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
from pth_top.configs.fileio import read_regular_file

_PARSE_LINE = re.compile(r"\(at line (\d+), column \d+\)")


# TOML integers are 64-bit (the spec, and every other parser); tomllib alone accepts any size.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# The deepest nesting of tables and arrays any pth-top file needs is 4; a hostile file gets this much.
MAX_NESTING_DEPTH = 16


def read_toml(path: str | Path) -> tuple[dict[str, Any], str]:
    """Parse a TOML file; any failure is a ConfigFileError naming the file (and line for syntax errors)."""
    source = Path(path)
    try:
        text = read_regular_file(source).decode("utf-8")
    except FileNotFoundError:
        raise ConfigFileError("no such file", path=source) from None
    except IsADirectoryError:
        raise ConfigFileError("is a directory, not a TOML file", path=source) from None
    except UnicodeDecodeError:
        raise ConfigFileError("not UTF-8 text", path=source) from None
    except OSError as error:
        raise ConfigFileError(f"cannot read: {error.strerror or error}", path=source) from None
    except ValueError as error:  # a NUL in the path
        raise ConfigFileError(f"cannot read: {error}", path=source) from None
    return parse_toml(text, source), text


def parse_toml(text: str, path: str | Path | None = None) -> dict[str, Any]:
    """Parse TOML text; refuses integers beyond 64 bits and nesting deeper than MAX_NESTING_DEPTH."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        match = _PARSE_LINE.search(message)
        reason = "malformed TOML: " + _PARSE_LINE.sub("", message).strip()
        raise ConfigFileError(reason, path=path, line=int(match.group(1)) if match else None) from None
    except ValueError:  # int() refuses over 4,300 digits
        raise ConfigFileError(
            "malformed TOML: an integer too long to read (TOML integers are 64-bit)", path=path
        ) from None
    except RecursionError:
        raise ConfigFileError(f"malformed TOML: nested deeper than {MAX_NESTING_DEPTH} levels", path=path) from None
    _check_values(data, (), path, text)
    return data


def _check_values(value: Any, keys: tuple[str, ...], path: str | Path | None, text: str) -> None:
    if len(keys) > MAX_NESTING_DEPTH:
        dotted = "".join(key if key.startswith("[") else f".{key}" for key in keys[:4]).lstrip(".")
        raise ConfigFileError(f"nested deeper than {MAX_NESTING_DEPTH} levels", path=path, key=dotted + "...")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_values(item, (*keys, key), path, text)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_values(item, (*keys, f"[{index}]"), path, text)
    elif isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX:
        named = [key for key in keys if not key.startswith("[")]
        raise ConfigFileError(
            "integer out of range (TOML integers are 64-bit)", path=path,
            line=line_of_key(text, named[-1]) if named else None, key=".".join(named) or None,
        )


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
    """The line of `key` in the body of `[table]` (up to the next header); the header's line when absent."""
    start = line_of_table(text, table, occurrence)
    if start is None:
        return line_of_key(text, key)
    found = line_of_key(text, key, start)
    lines = text.splitlines()
    if found is not None and not any(line.lstrip().startswith("[") for line in lines[start:found - 1]):
        return found
    return start
