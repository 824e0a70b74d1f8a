"""Text from outside (process names, files, children) made safe to print on a terminal."""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, the bidi marks, embeddings, overrides and isolates that reorder a line on screen,
# the line and paragraph separators that break it, and the zero-width BOM.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")
# Lone surrogates (from surrogateescape decoding) cannot be encoded to a terminal.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, limit: int | None = None) -> str:
    """`text` with every control character shown as a visible escape (`\\x1b`), cut to `limit` chars.

    Nothing that came from another process, a file or a child reaches a terminal raw: an escape
    sequence in a process name could retitle the window or write the clipboard (OSC 52).
    """
    value = text if isinstance(text, str) else str(text)
    if not (value.isascii() and value.isprintable()):  # printable ASCII, most of what comes, has nothing to escape
        if _UNSAFE.search(value):
            value = _UNSAFE.sub(_escape, value)
        if _SURROGATE.search(value):
            value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    if limit is not None and len(value) > limit:
        value = value[: max(0, limit - 1)] + "…"
    return value
