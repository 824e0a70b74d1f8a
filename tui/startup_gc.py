"""Garbage collection paused while the dashboard starts, then resumed with start-up objects frozen.

Start-up builds many long-lived objects (modules, classes, widgets, CSS rules); collecting while they
are made frees little and costs about a tenth of the time to the first frame. After that frame, one
collection frees start-up's garbage and freezing the rest keeps later collections from walking it.
"""

from __future__ import annotations

import gc

_paused_here = False


def pause() -> None:
    """Stop automatic collection until `resume()`; a no-op when it is already off."""
    global _paused_here
    if gc.isenabled():
        gc.disable()
        _paused_here = True


def resume() -> None:
    """Collect once, freeze what is left and turn collection back on, if `pause()` turned it off."""
    global _paused_here
    if _paused_here:
        gc.collect()
        gc.freeze()
        gc.enable()
        _paused_here = False
