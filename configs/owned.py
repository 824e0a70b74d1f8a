"""Cards the buyer has already (budget.owned_gpu): the build is around them, and they are not priced."""

from __future__ import annotations

import datetime as dt
import difflib
from typing import Mapping

from pth_top.configs.answers import Answers
from pth_top.configs.errors import shown
from pth_top.configs.market import Quote
from pth_top.configs.parts import Catalog, Part

# An SXM or OAM module comes inside its server, priced with it; owned ones are a server already, not a build's part.
OWNED_FORMS_REFUSED = ("sxm", "oam")
OWNED_AS_OF = dt.date.max  # never stale: nothing is bought


def owned_pin(answers: Answers) -> tuple[str, int] | None:
    """The GPU pin the owned cards make: (catalog id, how many); None without owned cards."""
    budget = answers.budget
    return (budget.owned_gpu, budget.owned_gpu_count) if budget.owned_gpu and budget.owned_gpu_count else None


def with_owned_pin(answers: Answers, pins: Mapping[str, tuple[str, int]]) -> dict[str, tuple[str, int]]:
    """The pins with the owned cards as the GPU pin, unless a GPU is pinned already."""
    pin = owned_pin(answers)
    return {**pins, "gpu": pin} if pin is not None and "gpu" not in pins else dict(pins)


def check_owned(answers: Answers, catalog: Catalog) -> None:
    """One line (ValueError) where budget.owned_gpu names no card a build can take."""
    pin = owned_pin(answers)
    if pin is None:
        return
    part = catalog.get(pin[0])
    if part is None or part.kind != "gpu":
        ids = [gpu.id for gpu in catalog.of_kind("gpu")]
        near = difflib.get_close_matches(pin[0], ids, n=3, cutoff=0.5)
        raise ValueError(f"budget.owned_gpu = {shown(pin[0])}: no GPU with that id in the catalog (the id of a [[gpu]] "
                         "in its gpus.toml" + (f"; did you mean {', '.join(near)}?)" if near else ")"))
    if part["form"] in OWNED_FORMS_REFUSED:
        raise ValueError(f"budget.owned_gpu = {shown(pin[0])}: an {part['form'].upper()} module comes inside its "
                         "server; owned cards are PCIe cards, an edge module or a desktop system")


def is_owned(answers: Answers, part: Part) -> bool:
    """Whether the part is the buyer's own GPU (budget.owned_gpu)."""
    return part.kind == "gpu" and bool(answers.budget.owned_gpu) and part.id == answers.budget.owned_gpu


def owned_quote(currency: str, market: str) -> Quote:
    """What an owned card costs: nothing."""
    return Quote(0.0, 0.0, currency, OWNED_AS_OF, "", "owned", market)
