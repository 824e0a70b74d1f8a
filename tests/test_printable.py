"""printable(): every character that reorders, breaks or hides part of a line on a terminal is a visible escape."""

from __future__ import annotations

from pth_top.text import printable

# The bidi marks (LRM, RLM, ALM), embeddings and overrides, isolates, the line/paragraph separators, the BOM.
LINE_CHANGERS = ["\u200e", "\u200f", "\u061c", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
                 "\u2066", "\u2067", "\u2068", "\u2069", "\u2028", "\u2029", "\ufeff"]
CONTROLS = ["\x00", "\x07", "\x1b", "\x7f", "\x80", "\x85", "\x9b", "\x9f"]


def test_each_unsafe_character_becomes_a_visible_escape():
    wrong = {}
    for char in [*LINE_CHANGERS, *CONTROLS, "\udcff"]:
        shown = printable(f"gpu{char}0.bin")
        escape = f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"
        if shown != f"gpu{escape}0.bin" or char in shown or not shown.isprintable():
            wrong[f"U+{ord(char):04X}"] = shown
    assert not wrong


def test_a_spoofed_file_name_shows_in_its_real_order_and_plain_text_is_kept():
    # "exe.txt" shown as "txt.exe" by an RLM-led override: every mark becomes visible text.
    assert printable("invoice\u200f\u202etxt.exe\u202c\u200e") == "invoice\\u200f\\u202etxt.exe\\u202c\\u200e"
    for text in ("café", "محمد", "日本語", "👩\u200d💻", "plain text"):
        assert printable(text) == text
