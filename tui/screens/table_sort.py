"""The sort keys of a table screen (`>` `<` cycle the column, `I` inverts), declared once for every such screen."""

from __future__ import annotations

from textual.binding import Binding


def sort_bindings(prefix: str) -> list[Binding]:
    """`>`/`.` next column, `<`/`,` previous, `I` invert; binding ids under `prefix`."""
    return [
        Binding("greater_than_sign,full_stop", "cycle_sort(1)", "Sort by the next column",
                id=f"{prefix}.sort_next", key_display=">"),
        Binding("less_than_sign,comma", "cycle_sort(-1)", "Sort by the previous column",
                id=f"{prefix}.sort_previous", show=False, key_display="<"),
        Binding("I", "invert_sort", "Invert sort", id=f"{prefix}.invert_sort", show=False),
    ]


class SortedByColumn:
    """A screen's sort state over `sort_keys`; `resort()` redraws after each change."""

    sort_keys: tuple[str, ...] = ()
    sort_key: str
    descending: bool

    def resort(self) -> None:
        raise NotImplementedError

    def action_cycle_sort(self, step: int) -> None:
        keys = self.sort_keys
        self.sort_key = keys[(keys.index(self.sort_key) + step) % len(keys)]
        self.resort()

    def action_invert_sort(self) -> None:
        self.descending = not self.descending
        self.resort()
