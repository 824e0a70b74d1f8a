"""The buyer's market: which price a part has there (new, used, or converted from another market's) and how money
is shown in the budget's currency.

Amounts inside the recommender are yuan-equivalents at rules.toml's rates: a USD price is multiplied in by the
same rate the USD budget is, so comparisons are those of the USD figures, and the display divides it out again.
"""

from __future__ import annotations

import datetime as dt
import statistics
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping

from pth_top.configs.parts import Part
from pth_top.configs.rules import Rules

MARKET_OF_CURRENCY = {"CNY": "cn", "USD": "us", "EUR": "eu"}
CURRENCY_OF_MARKET = {market: currency for currency, market in MARKET_OF_CURRENCY.items()}
MARKET_NAMES = {"cn": "China", "us": "US", "eu": "EU"}
SYMBOLS = {"CNY": "¥", "USD": "$", "EUR": "€"}
CURRENCY_UNITS = {"CNY": "yuan", "USD": "dollar", "EUR": "euro"}  # "per euro"
KIND_NAMES = {"memory_kit": "RAM kits", "storage": "drives"}


def buyer_market(market: str, currency: str) -> str:
    """The answers' market: given, or (auto) the currency's home market."""
    return MARKET_OF_CURRENCY[currency] if market == "auto" else market


def cny_per(currency: str, rules: Rules) -> float:
    return 1.0 if currency == "CNY" else float(getattr(rules.currency, f"cny_per_{currency.lower()}"))


def money(amount_cny: float, currency: str, rules: Rules, cents: bool = False) -> str:
    """A yuan-equivalent amount in the budget's currency: "$1,999"; with `cents` (an hourly rate), "$1.48"."""
    return f"{SYMBOLS[currency]}{amount_cny / cny_per(currency, rules):,.{2 if cents else 0}f}"


@dataclass(frozen=True, slots=True)
class Quote:
    """What the part costs this buyer: the amount in yuan-equivalents, where it comes from, and what was assumed."""

    amount_cny: float
    amount: float  # as quoted, in `currency`
    currency: str
    as_of: dt.date
    source: str
    basis: str  # "new", "used" (a used listing), "used_converted" (a used listing in another market or currency),
    # "converted" (another market's new price), "indexed" (the China price x its kind's market index),
    # "gpu_floor" (a server at least its GPUs' own price), "owned" (the buyer's own card: budget.owned_gpu)
    market: str  # whose price it is
    index: PriceIndex | None = None  # the index an "indexed" price is reckoned with
    floor_of: str = ""  # a "gpu_floor" price's GPUs: "8 x NVIDIA H200 SXM 141GB at $35,000"
    floor_why: str = ""  # and why the server's own price was not taken
    abroad: bool = False  # a used listing in another market than the buyer's (shipping on top)
    import_vat_fraction: float = 0.0  # the buyer market's import VAT, in amount_cny (rules.toml budget)
    source_vat_fraction: float = 0.0  # the VAT in another market's shop price, taken out of amount_cny
    # (owned, all): cards like the buyer's own bought beside them; the amount is a card's x (all - owned) / all.
    owned_of: tuple[int, int] = (0, 0)


@dataclass(frozen=True, slots=True)
class PriceIndex:
    """How a kind's prices in a market compare with their base prices (price_cny, dated before base_before): the
    median ratio over its parts priced in both (rules.toml budget.indexed_kinds: DRAM and NAND move as a category).
    `group` narrows the kind (registered RAM, NVMe drives); "" is the whole kind."""

    group: str
    market: str
    ratio: float
    parts_count: int
    as_of: dt.date  # the newest of those market prices
    base_before: dt.date


def index_group(part: Part) -> str:
    """The part's group within its kind: RAM registered or not, an SSD by its interface, a hard drive apart."""
    if part.kind == "memory_kit":
        return "registered" if part.get("registered") else "unbuffered"
    if part.kind == "storage":
        return HDD_GROUP if part.get("media") == "hdd" else str(part.get("interface", ""))
    return ""


# Hard drives are indexed only by hard drives: the 2026 NAND surge's SSD ratios do not price them.
HDD_GROUP = "hdd"


def price_indexes(parts: Iterable[Part], market: str, currency: str, kinds: Iterable[str], min_parts: int,
                  base_before: dt.date, rules: Rules) -> dict[str, PriceIndex]:
    """The market's index per indexed kind and per group ("kind/group" keys; "kind" for the whole kind), from parts
    with its own price in the buyer's currency over a base price dated before base_before."""
    chosen_kinds = set(kinds)
    pairs: dict[tuple[str, str], list[tuple[float, dt.date]]] = {}
    for part in parts:
        entry = _entry(part.get("prices"), market)
        if (part.kind not in chosen_kinds or entry is None or entry["currency"] != currency
                or part.price_as_of >= base_before or not _china_priced(part)):
            continue
        own = _from_entry(entry, "new", market, rules)
        pair = (own.amount_cny / _base(part).amount_cny, own.as_of)
        if index_group(part) != HDD_GROUP:
            pairs.setdefault((part.kind, ""), []).append(pair)
        pairs.setdefault((part.kind, index_group(part)), []).append(pair)
    indexes: dict[str, PriceIndex] = {}
    for (kind, group), found in pairs.items():
        if len(found) >= min_parts:
            indexes[f"{kind}/{group}" if group else kind] = PriceIndex(
                group, market, statistics.median(ratio for ratio, _ in found), len(found),
                max(as_of for _, as_of in found), base_before)
    return indexes


def index_for(part: Part, indexes: Mapping[str, PriceIndex] | None) -> PriceIndex | None:
    """The index that prices this part: its group's, else its kind's; none for a base dated on or after it."""
    indexes = indexes or {}
    if not _china_priced(part):  # its base is another market's price: no China index applies
        return None
    group = index_group(part)
    index = indexes.get(f"{part.kind}/{group}") or (indexes.get(part.kind) if group != HDD_GROUP else None)
    return index if index is not None and part.price_as_of < index.base_before else None


def _entry(table: Any, market: str) -> dict[str, Any] | None:
    entry = (table or {}).get(market)
    return entry if isinstance(entry, dict) else None


def _from_entry(entry: dict[str, Any], basis: str, market: str, rules: Rules) -> Quote:
    amount, currency = float(entry["amount"]), str(entry["currency"])
    return Quote(amount * cny_per(currency, rules), amount, currency, entry["as_of"], str(entry["source"]), basis,
                 market)


def _china_priced(part: Part) -> bool:
    """Whether price_cny is a China price (not another market's converted, price_cny_converted_from)."""
    return not part.get("price_cny_converted_from")


def _base(part: Part) -> Quote:
    """The catalog's base price: price_cny, the China price at price_as_of."""
    return Quote(part.price_cny, part.price_cny, "CNY", part.price_as_of, part.get("price_source", ""), "new", "cn")


def _china_base(part: Part, rules: Rules) -> Quote:
    """The China price; for a part whose price_cny converts another market's, that market's newest price."""
    china = _entry(part.get("prices"), "cn")
    if china is not None:
        return _from_entry(china, "new", "cn", rules)
    if _china_priced(part):
        return _base(part)
    origin = part["price_cny_converted_from"]
    entry = _entry(part.get("prices"), origin)
    if entry is not None and entry["as_of"] >= part.price_as_of:
        return _from_entry(entry, "new", origin, rules)
    currency = CURRENCY_OF_MARKET[origin]
    return Quote(part.price_cny, part.price_cny / cny_per(currency, rules), currency, part.price_as_of,
                 part.get("price_source", ""), "new", origin)


def new_quote(part: Part, market: str, currency: str, rules: Rules,
              indexes: Mapping[str, PriceIndex] | None = None) -> Quote:
    """The market's new price; else the China price (price_cny), times the kind's market index where there is one,
    else marked converted unless the buyer pays in yuan in China."""
    entry = _entry(part.get("prices"), market)
    if entry is not None:
        quote = _from_entry(entry, "new", market, rules)
        return quote if quote.currency == currency else _converted(quote)
    index = index_for(part, indexes)
    if index is not None:  # dated as the index's market prices: the estimate is theirs, not the base's
        base = _base(part)
        return Quote(round(base.amount_cny * index.ratio, 2), base.amount, base.currency, index.as_of, base.source,
                     "indexed", base.market, index)
    quote = _pre_tax_abroad(part, market, rules) or _china_base(part, rules)
    if quote.market == market:
        return quote if quote.currency == currency else _converted(quote)
    # Another market's shop price: its own VAT out (an EU or China price has it in, a US one none), the buyer's in.
    source_vat = vat_of(quote.market, rules)
    vat = vat_of(market, rules)
    return replace(_converted(quote), amount_cny=quote.amount_cny / (1 + source_vat) * (1 + vat),
                   import_vat_fraction=vat, source_vat_fraction=source_vat)


def _pre_tax_abroad(part: Part, market: str, rules: Rules) -> Quote | None:
    """Outside China, the newest pre-tax market price (the US's) the buyer's import VAT is added to: China prices of
    export-controlled and China-only parts follow China's own supply (H200: CNY 190,000 there, US$35,000 in the US)."""
    if market == "cn" or part.get("price_cny_converted_from") == market:  # the base is this market's own price
        return None
    entries = [(entry["as_of"], name, entry) for name in rules.budget.prices_before_tax_markets
               if name != market and (entry := _entry(part.get("prices"), name)) is not None]
    if not entries:
        return None
    _, name, entry = max(entries, key=lambda found: (found[0], found[1]))
    return _from_entry(entry, "new", name, rules)


def vat_of(market: str, rules: Rules) -> float:
    """`market`'s VAT (rules.toml budget.vat_fraction), in its shop prices and paid at its border; 0: none."""
    return next((fraction for name, fraction in rules.budget.vat_fraction.items() if name == market), 0.0)


def _converted(quote: Quote) -> Quote:
    return Quote(quote.amount_cny, quote.amount, quote.currency, quote.as_of, quote.source, "converted",
                 quote.market)


def quote(part: Part, market: str, currency: str, condition: str, rules: Rules,
          indexes: Mapping[str, PriceIndex] | None = None) -> Quote:
    """The price this buyer pays: for a used-allowed GPU, its used listing (used_quote) when cheaper than a new one
    the market sells (in production, or a dated clearance listing there), or when none is sold new; without a
    listing, the new price."""
    new = new_quote(part, market, currency, rules, indexes)
    if condition != "used" or part.kind != "gpu":
        return new
    used = used_quote(part, market, currency, rules)
    if used is None:  # no used listing: what it costs new (a used-only card's price_cny, gpus.toml)
        return new
    sold_new = part.buyable("new", market) or _entry(part.get("prices"), market) is not None
    return used if not sold_new or used.amount_cny < new.amount_cny else new


def used_quote(part: Part, market: str, currency: str, rules: Rules) -> Quote | None:
    """The market's own used listing, else the newest other market's, converted with the buyer's import VAT (eBay
    ships across borders); in China only for a card sold new there, as an export-barred or retired card's used price
    there follows its own scarcity (audit YA2: a used RTX 3060 was priced new in China, CNY 2,399, eBay's ~1,430)."""
    listings = part.get("used_prices") or {}
    if market in listings:
        used = _from_entry(listings[market], "used", market, rules)
        return used if used.currency == currency else _converted_used(used)
    if (market == "cn" and part.get("availability") != "new") or not listings:
        return None
    listed_in = max((listing["as_of"], name) for name, listing in listings.items())[1]
    used = _from_entry(listings[listed_in], "used", listed_in, rules)
    used = used if used.currency == currency else _converted_used(used)
    vat = vat_of(market, rules)
    return replace(used, amount_cny=used.amount_cny * (1 + vat), abroad=True, import_vat_fraction=vat)


# An 8-GPU server's host beside its GPUs (CPUs, RAM, NICs, drives, power supplies, chassis): $32,010 in SemiAnalysis's
# bill of materials of a DGX H100 (2023; epoch-research/training-cost-trends), a cost to make, so a floor.
SERVER_HOST_USD_PER_GPU = 32_010 / 8


def gpu_floor(server: Quote, gpu: Quote, count: int, gpu_name: str, market: str, rules: Rules) -> Quote:
    """A whole server priced only in another market, or at an older date than its GPU here: at least its GPUs at
    the price this buyer pays for them (this market's own, else converted as new_quote does) and its host's parts
    (SERVER_HOST_USD_PER_GPU; audit BZ57: an HGX H200 priced at its 8 GPUs alone came out 'within' EUR 300,000)."""
    host_cny = SERVER_HOST_USD_PER_GPU * count * cny_per("USD", rules) * (1 + gpu.import_vat_fraction)  # as its GPUs
    current = server.market == market and server.as_of >= gpu.as_of
    if current or count * gpu.amount_cny + host_cny <= server.amount_cny:
        return server
    shown = f"{SYMBOLS[gpu.currency]}{gpu.amount:,.0f}"
    host = f"{SYMBOLS[gpu.currency]}{host_cny / cny_per(gpu.currency, rules):,.0f}"
    why = (f"the catalog's price for the whole server is of {server.as_of}, older than its GPU's, and" if
           server.market == market else "the catalog prices the whole server only in another market, and that "
           "price converted")
    return Quote(count * gpu.amount_cny + host_cny, count * gpu.amount + host_cny / cny_per(gpu.currency, rules),
                 gpu.currency, gpu.as_of, gpu.source, "gpu_floor", gpu.market,
                 floor_of=f"{count} x {gpu_name} at {shown} each and {host} for its host (CPUs, RAM, NICs, drives: "
                 "SemiAnalysis's DGX H100 bill of materials, $4,001 a GPU)", floor_why=why,
                 import_vat_fraction=gpu.import_vat_fraction, source_vat_fraction=gpu.source_vat_fraction)


def _converted_used(quote: Quote) -> Quote:
    return Quote(quote.amount_cny, quote.amount, quote.currency, quote.as_of, quote.source, "used_converted",
                 quote.market)


def quote_line(part: Part, q: Quote, currency: str, rules: Rules) -> str:
    """One line on where the price comes from, for the part's reasoning."""
    shown = f"{SYMBOLS[q.currency]}{q.amount:,.0f}"
    where = MARKET_NAMES[q.market]
    source = f", {q.source}" if q.source else ""
    if q.basis == "owned":
        return "price 0: cards you have (budget.owned_gpu), not bought: the total is the rest of the build"
    if q.owned_of[0]:
        owned, total = q.owned_of
        share = total / (total - owned)
        card = replace(q, amount_cny=q.amount_cny * share, amount=q.amount * share, owned_of=(0, 0))
        return (f"{total - owned} bought beside the {owned} you have (budget.owned_gpu, at 0), each at: "
                + quote_line(part, card, currency, rules))
    if q.basis == "new":
        return f"price {shown}: {where} market, new, as of {q.as_of}{source}"
    vat = (f", less its {q.source_vat_fraction:.0%} VAT" if q.source_vat_fraction else "") + (
        f", plus {q.import_vat_fraction:.0%} import VAT" if q.import_vat_fraction else "")
    carried = f"{vat} (a listing abroad: shipping{'' if vat else ', import duty and VAT'} on top)" if q.abroad else vat
    if q.basis == "used" and not q.abroad:
        return f"price {shown}: {where} used market (second-hand listings), as of {q.as_of}{source}"
    if q.basis == "used":
        return (f"price {money(q.amount_cny, currency, rules)}: a {where} used listing at {shown}, as of "
                f"{q.as_of}{source}{carried}")
    if q.basis == "gpu_floor":
        converted = "" if q.currency == currency else f"{vat} converted at rules.toml's rate"
        return (f"price {money(q.amount_cny, currency, rules)}: ESTIMATED as its {q.floor_of} ({where} market, "
                f"as of {q.as_of}{source}){converted}: {q.floor_why} is less than its GPUs and host")
    index = q.index
    if q.basis == "indexed" and index is not None:
        converted = "" if currency == "CNY" else " converted at rules.toml's rate"
        where_index = MARKET_NAMES[index.market]
        group = f"{index.group} " if index.group else ""
        return (f"price {money(q.amount_cny, currency, rules)}: ESTIMATED, the China new price {shown} (as of "
                f"{part.price_as_of}){converted} x {index.ratio:.2f}, the median ratio of the {index.parts_count} "
                f"{group}{KIND_NAMES.get(part.kind, part.kind)} with a {where_index}-market {currency} price (newest "
                f"{index.as_of}) to that base; the catalog has no {where_index}-market price for it")
    kind = "used" if q.basis == "used_converted" else "new"
    return (f"price {money(q.amount_cny, currency, rules)}: CONVERTED from the {where} {kind} price {shown} "
            f"(as of {q.as_of}) at rules.toml's rate{carried}; the catalog has no {currency} price for it in this "
            "market")
