"""QuietStatic skips updates that would repaint the same content."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult

from pth_top.widgets.quiet_static import QuietStatic
from tests.waiting import wait_until


class OneStatic(App):
    def compose(self) -> ComposeResult:
        yield QuietStatic(Text("load 0.10"))


async def test_same_content_is_not_repainted_and_new_content_is():
    app = OneStatic()
    async with app.run_test(size=(40, 5)) as pilot:
        static = app.query_one(QuietStatic)
        await wait_until(pilot, lambda: "0.10" in app.export_screenshot(), what="the first paint")
        refreshes = []
        original_refresh = static.refresh
        static.refresh = lambda *args, **kwargs: (refreshes.append(kwargs), original_refresh(*args, **kwargs))[1]
        static.update(Text("load 0.10"), layout=False)
        assert refreshes == []
        static.update(Text("load 0.25"), layout=False)
        assert refreshes == [{"layout": False}]
        assert static.content == Text("load 0.25")
        await wait_until(pilot, lambda: "0.25" in app.export_screenshot(), what="the new content painted")
