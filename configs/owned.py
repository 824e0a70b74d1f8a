"""Cards the buyer has already (budget.owned_gpu): the build is around them, and they are not priced."""

from __future__ import annotations

import datetime as dt
import difflib
from dataclasses import replace
from typing import Mapping

from pth_top.configs.answers import Answers
from pth_top.configs.errors import shown
from pth_top.configs.market import Quote
from pth_top.configs.part_types import DESKTOP_SYSTEM, SYSTEM_GPU_FORMS
from pth_top.configs.parts import Catalog, Part

OWNED_AS_OF = dt.date.max  # never stale: nothing is bought


def owned_pin(answers: Answers) -> tuple[str, int] | None:
    """The GPU pin the owned cards make: (catalog id, how many): those you have, or scale.gpu_count where it asks for
    more of them; None without owned cards."""
    budget = answers.budget
    if not (budget.owned_gpu and budget.owned_gpu_count):
        return None
    return budget.owned_gpu, max(budget.owned_gpu_count, answers.scale.gpu_count)


def bought_beside_owned(answers: Answers) -> int:
    """How many more cards like the owned ones the build buys: its GPU count beyond those you have."""
    budget = answers.budget
    return max(0, answers.scale.gpu_count - budget.owned_gpu_count) if budget.owned_gpu else 0


def owned_line(answers: Answers) -> str:
    """The GPU's reasoning line on the buyer's own cards, and those bought beside them."""
    owned, bought, used = answers.budget.owned_gpu_count, bought_beside_owned(answers), answers.scale.gpu_count
    more = f", and {bought} more like them bought (scale.gpu_count = {used})" if bought else ""
    which = f"{used} of the {owned} you have" if used < owned else f"the {owned} you have"
    return f"{which} (budget.owned_gpu): not bought{more}; the build is around them"


def all_owned(answers: Answers, part: Part | None) -> bool:
    """Whether the part is the buyer's own GPU and the build buys none of it."""
    return is_owned(answers, part) and not bought_beside_owned(answers)


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
    if part["form"] in SYSTEM_GPU_FORMS:
        problem = owned_server_problem(catalog, part, answers.budget.owned_gpu_count, answers.scale.gpu_count)
    else:
        problem = owned_form_problem(part["form"], answers.scenario, pin[1])
    if problem:
        raise ValueError(f"budget.owned_gpu = {shown(pin[0])}: {problem}")


def owns_server(answers: Answers, catalog: Catalog, system: Part) -> bool:
    """Whether this whole server carries the buyer's own SXM/OAM modules, all of them owned: it is theirs."""
    return system.kind == "system" and all_owned(answers, catalog.get(system.get("gpu_id") or ""))


def owned_servers(catalog: Catalog, gpu: Part) -> list[Part]:
    """The catalog's whole servers carrying this SXM/OAM GPU, end-of-life ones too: owned modules are their server."""
    return [system for system in catalog.of_kind("system") if system.get("gpu_id") == gpu.id]


def owned_server_problem(catalog: Catalog, gpu: Part, owned_count: int, used_count: int) -> str:
    """Why owned SXM/OAM modules cannot be entered ("" where they can): they are the buyer's whole server, so their
    count is a catalog server's and the build buys no more of them."""
    counts = sorted({system["gpu_count"] for system in owned_servers(catalog, gpu)})
    form = gpu["form"].upper()
    if not counts:
        return f"an {form} module comes inside its server, and the catalog has no server carrying it: enter the " \
               "server's GPUs as a catalog server's, or add one to your systems.toml"
    if owned_count > counts[-1]:
        return f"an {form} module comes inside its server: budget.owned_gpu_count is the server's GPU count " \
               f"({' or '.join(map(str, counts))} for {gpu.name}), or fewer of them, a share of it (a cloud VM's)"
    if used_count > owned_count:
        return f"an {form} server's GPUs come with it: scale.gpu_count = {used_count} is more than its {owned_count}"
    return ""


def grown_share(catalog: Catalog, changed: Answers) -> Answers | None:
    """A lever's answers on more GPUs of an owned SXM/OAM server: a larger share of it (owned_gpu_count raised, as a
    cloud VM of that many; review r72: 2 x A100 SXM priced as a whole end-of-life DGX), None past its GPUs; the
    lever's answers as they are for other cards (more are bought beside them)."""
    gpu = catalog.get(changed.budget.owned_gpu) if changed.budget.owned_gpu else None
    if gpu is None or gpu["form"] not in SYSTEM_GPU_FORMS or changed.scale.gpu_count <= changed.budget.owned_gpu_count:
        return changed
    counts, wanted = [system["gpu_count"] for system in owned_servers(catalog, gpu)], changed.scale.gpu_count
    if not counts or wanted > max(counts) or wanted & (wanted - 1):  # a cloud VM's 1, 2, 4 or 8 (review r73: 3)
        return None
    return changed.with_value("budget", "owned_gpu_count", changed.scale.gpu_count)


GROWN_SHARE_LABEL = "{label}, on {n} of its GPUs (budget.owned_gpu_count = {n}: a larger share, its rent not counted)"


def owned_form_problem(form: str, scenario: str, count: int = 1) -> str:
    """Why cards of this form cannot be the buyer's own in this scenario ("" where they can): an edge module is an
    edge build's and an edge build's is one, a desktop system is one box (SXM/OAM: owned_server_problem)."""
    if (form == "edge") != (scenario == "edge_deployment"):
        return "an edge module is an edge build (scenario = \"edge_deployment\") and an edge build's GPU is one"
    if form == DESKTOP_SYSTEM and count != 1:
        return "a desktop system is one box: budget.owned_gpu_count = 1"
    return ""


def without_owned(answers: Answers) -> Answers:
    """The answers with no owned cards: a build that buys its GPUs."""
    return answers.with_value("budget", "owned_gpu", "").with_value("budget", "owned_gpu_count", 0)


def is_owned(answers: Answers, part: Part | None) -> bool:
    """Whether the part is the buyer's own GPU (budget.owned_gpu); a CPU-only build's None is not."""
    return part is not None and part.kind == "gpu" and bool(answers.budget.owned_gpu) and \
        part.id == answers.budget.owned_gpu


def owned_quote(currency: str, market: str) -> Quote:
    """What an owned card costs: nothing."""
    return Quote(0.0, 0.0, currency, OWNED_AS_OF, "", "owned", market)


def beside_owned_quote(card: Quote, answers: Answers) -> Quote:
    """The GPUs' unit price where the build buys cards like the owned ones: a card's, over the bought share."""
    total, owned = answers.scale.gpu_count, answers.budget.owned_gpu_count
    share = (total - owned) / total
    return replace(card, amount_cny=card.amount_cny * share, amount=card.amount * share, owned_of=(owned, total))
