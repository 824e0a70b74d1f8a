"""KeyBar: shows the focused widget's and screen's keys, one per action, follows focus, presses a clicked key."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from pth_top.widgets.key_bar import KeyBar
from tests.waiting import wait_until


class Left(Static, can_focus=True):
    BINDINGS = [Binding("x", "app.record('x')", "Ex")]


class Right(Static, can_focus=True):
    BINDINGS = [Binding("y", "app.record('y')", "Why"), Binding("z", "app.record('z')", "Hidden", show=False)]


class KeyBarApp(App):
    BINDINGS = [Binding("q,f10", "app.record('q')", "Quit")]

    def __init__(self) -> None:
        super().__init__()
        self.recorded: list[str] = []

    def compose(self) -> ComposeResult:
        yield Left("left", id="left")
        yield Right("right", id="right")
        yield KeyBar()

    def action_record(self, name: str) -> None:
        self.recorded.append(name)


def bar_text(app) -> str:
    return app.query_one(KeyBar).render().plain


async def focus(pilot, app, widget_id: str, hint: str) -> None:
    """Focus a widget and wait until the bar shows `hint`, one of its keys."""
    app.query_one(widget_id).focus()
    await wait_until(pilot, lambda: hint in bar_text(app), what=f"{hint!r} in the key bar")


async def test_key_bar_follows_focus_and_shows_each_action_once():
    app = KeyBarApp()
    async with app.run_test(size=(80, 10)) as pilot:
        await focus(pilot, app, "#left", " x Ex ")
        text = bar_text(app)
        assert " x Ex " in text and " q Quit " in text and "Why" not in text
        assert text.count("Quit") == 1, "q and f10 share one action: one hint"
        assert text.rstrip().endswith("palette")
        await focus(pilot, app, "#right", " y Why ")
        text = bar_text(app)
        assert " y Why " in text and "Ex" not in text and "Hidden" not in text


async def test_clicking_a_key_presses_it():
    app = KeyBarApp()
    async with app.run_test(size=(80, 10)) as pilot:
        await focus(pilot, app, "#right", " y Why ")
        bar = app.query_one(KeyBar)
        column = bar.render().plain.index(" y Why") + 1
        await pilot.click(KeyBar, offset=(column, 0))
        await wait_until(pilot, lambda: app.recorded, what="the clicked key pressed")
        assert app.recorded == ["y"]


async def test_a_narrow_bar_drops_whole_hints_and_keeps_the_palette_key():
    app = KeyBarApp()
    async with app.run_test(size=(24, 10)) as pilot:
        await focus(pilot, app, "#right", "Why")
        text = bar_text(app)
        assert len(text) == 24 and text.rstrip().endswith("palette")
        assert "Why" in text and "Quit" not in text and "Qu" not in text
