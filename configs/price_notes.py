"""Where each price comes from, in the parts' reasoning, and the build's warnings about its prices: converted,
estimated, unlisted used, out of production, or older than STALE_PRICE_DAYS."""

from __future__ import annotations

import dataclasses
import datetime as dt

from pth_top.configs.assembly import Assembly, Context, part_quote
from pth_top.configs.build import Component
from pth_top.configs.market import MARKET_NAMES, quote_line, used_quote
from pth_top.configs.owned import all_owned, is_owned
from pth_top.configs.parts import STALE_PRICE_DAYS, Part


def price_warnings(ctx: Context, assembly: Assembly, today: dt.date) -> list[str]:
    """The price-basis lines, then one on prices older than STALE_PRICE_DAYS."""
    lines = _price_basis_warnings(ctx, assembly)
    dated = [part_quote(ctx, part).as_of for part, _ in assembly.chosen.values()]
    stale = [as_of for as_of in dated if (today - as_of).days > STALE_PRICE_DAYS]
    if stale:
        lines.append(
            f"{len(stale)} of {len(assembly.chosen)} prices are older than {STALE_PRICE_DAYS} days (oldest "
            f"{min(stale)}): check them and override in the user catalog"
        )
    return lines


def with_price_line(ctx: Context, component: Component, assembly: Assembly) -> Component:
    """The component's reasoning ends with where its price comes from (market, new/used, date, page)."""
    part = assembly.chosen[component.role][0]
    if component.role == "gpu" and not assembly.unit_prices.get("gpu") and not is_owned(ctx.answers, part):
        return component  # priced with its server
    found = part_quote(ctx, part)
    line = quote_line(part, found, ctx.currency, ctx.rules)
    if part.retired and found.basis != "owned":  # an owned end-of-life server is not bought
        line = f"{_retired_text(ctx, part)}; {line}"
    return dataclasses.replace(component, reasoning=(*component.reasoning, line))


def _retired_text(ctx: Context, part: Part) -> str:
    successor = ctx.catalog.get(part.get("successor_id", ""))
    instead = f"; the 2026 market sells the {successor.name} in its place" if successor is not None else ""
    return f"OUT OF PRODUCTION ({part['retired_reason']}): never recommended, here only because it is pinned{instead}"


def _price_basis_warnings(ctx: Context, assembly: Assembly) -> list[str]:
    """Prices that are not this market's own new or used listing: converted, indexed or floored; a GPU of a used
    build that no listing prices here, or whose listing is dearer than new; and pinned out-of-production parts."""
    parts = [part for part, _ in assembly.chosen.values()]
    quotes = {part.id: part_quote(ctx, part) for part in parts}
    converted = [part.name for part in parts if quotes[part.id].basis in ("converted", "used_converted")]
    indexed = [part.name for part in parts if quotes[part.id].basis == "indexed"]
    floored = [part.name for part in parts if quotes[part.id].basis == "gpu_floor"]
    lines = []
    if floored:
        floor_market = next(quotes[part.id].market for part in parts if quotes[part.id].basis == "gpu_floor")
        whose = ("own " if floor_market == ctx.market else "") + f"{MARKET_NAMES[floor_market]}-market price" + (
            "" if floor_market == ctx.market else " converted")
        lines.append(f"ESTIMATED at its GPUs' {whose} and a host's parts: {', '.join(floored)} (the "
                     "catalog's price for the whole server is another market's or older, and less than those); get a "
                     "quote for the machine")
    if indexed:
        lines.append(f"{len(indexed)} of {len(parts)} prices are ESTIMATED from older China prices x the "
                     f"{MARKET_NAMES[ctx.market]} market's 2026 index for their kind (rules.toml "
                     f"budget.indexed_kinds): {', '.join(indexed)}; check them there and override in the user catalog "
                     f"(prices.{ctx.market})")
    if converted:
        lines.append(f"{len(converted)} of {len(parts)} prices are CONVERTED at rules.toml's rate (as of "
                     f"{ctx.rules.currency.as_of}), not {MARKET_NAMES[ctx.market]}-market {ctx.currency} prices: "
                     f"{', '.join(converted)}; check them there and override in the user catalog (prices.{ctx.market})")
    priced_new = [part for part in parts if ctx.answers.budget.condition == "used" and part.kind == "gpu"
                  and not quotes[part.id].basis.startswith("used") and not all_owned(ctx.answers, part)]
    unlisted = [part for part in priced_new if used_quote(part, ctx.market, ctx.currency, ctx.rules) is None]
    if unlisted:
        # A card not sold new here keeps the catalog's own figure for it (a used-only data-centre card's is used).
        how = "; ".join(f"{part.name} priced {'new' if part.buyable('new', ctx.market) else 'at the catalog figure'}"
                        for part in unlisted)
        lines.append(f"no used listing in the catalog for this market: {how}; check the used market and override in "
                     f"the user catalog (used_prices.{ctx.market})")
    dearer = [part.name for part in priced_new if part not in unlisted]
    if dearer:
        lines.append(f"used listings above the new price for {', '.join(dearer)}: priced new")
    retired = [part.name for part in parts if part.retired and quotes[part.id].basis != "owned"]
    if retired:
        lines.append(f"{len(retired)} pinned part(s) are out of production, with no 2026 price: {', '.join(retired)}; "
                     "swap them (each one's reasoning names what the 2026 market sells in its place where the catalog "
                     "has it)")
    return lines
