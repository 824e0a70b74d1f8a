"""QuietFooter still follows focus: it skips only the rebuilds that would show the same keys."""

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from widgets.quiet_footer import QuietFooter


class Left(Static, can_focus=True):
    BINDINGS = [Binding("x", "noop", "Ex")]


class Right(Static, can_focus=True):
    BINDINGS = [Binding("y", "noop", "Why")]


class FooterApp(App):
    def compose(self) -> ComposeResult:
        yield Left("left", id="left")
        yield Right("right", id="right")
        yield QuietFooter()


def footer_descriptions(app) -> set[str]:
    return {key.description for key in app.query("FooterKey")}


async def test_footer_follows_focus_and_skips_identical_rebuilds():
    app = FooterApp()
    async with app.run_test() as pilot:
        app.query_one("#left").focus()
        await pilot.pause()
        await pilot.pause()
        assert "Ex" in footer_descriptions(app) and "Why" not in footer_descriptions(app)
        app.query_one("#right").focus()
        await pilot.pause()
        await pilot.pause()
        assert "Why" in footer_descriptions(app) and "Ex" not in footer_descriptions(app)
        keys_before = list(app.query("FooterKey"))
        app.screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert list(app.query("FooterKey")) == keys_before, "same keys: the footer was not rebuilt"
