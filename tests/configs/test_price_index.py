"""RAM kits and drives without the buyer's market price: indexed by their kind's 2026 move, not a raw 2025 price."""

from __future__ import annotations

import dataclasses
import datetime as dt

from pth_top.configs.market import price_indexes, quote, quote_line
from pth_top.configs.parts import Catalog, Part
from pth_top.configs.recommend import recommend
from pth_top.configs.rules import load_rules
from tests.configs.builders import answers

RULES = load_rules()
USD = RULES.currency.cny_per_usd
WHEN = dt.date(2026, 3, 1)
BASE_BEFORE = RULES.budget.index_base_before


def kit(part_id: str, price_cny: float, us_usd: float | None = None, kind: str = "memory_kit") -> Part:
    prices = {"us": {"amount": us_usd, "currency": "USD", "as_of": WHEN, "source": "https://x.example/p"}}
    return Part(kind=kind, id=part_id, name=part_id, price_cny=price_cny, price_as_of=dt.date(2025, 6, 1),
                source="https://x.example/spec", spec={"prices": prices} if us_usd else {})


def test_the_index_is_the_median_ratio_of_the_kinds_parts_priced_in_both():
    # Ratios 3, 4 and 10 (a server kit's spot price): the median, 4, is what a kit without a US price gets.
    parts = [kit("a", 700, 700 * 3 / USD), kit("b", 1000, 1000 * 4 / USD), kit("c", 500, 500 * 10 / USD),
             kit("unpriced", 2000), kit("cpu", 1000, 2000 / USD, kind="cpu")]
    indexes = price_indexes(parts, "us", "USD", RULES.budget.indexed_kinds, 2, BASE_BEFORE, RULES)
    assert set(indexes) == {"memory_kit", "memory_kit/unbuffered"}  # a CPU is not a commodity kind
    index = indexes["memory_kit/unbuffered"]
    assert round(index.ratio, 6) == 4 and index.parts_count == 3 and index.as_of == WHEN
    unpriced = quote(parts[3], "us", "USD", "new", RULES, indexes)
    assert unpriced.basis == "indexed" and round(unpriced.amount_cny) == 8000
    line = quote_line(parts[3], unpriced, "USD", RULES)
    assert "ESTIMATED" in line and "x 4.00" in line and "3 unbuffered RAM kits" in line
    assert f"${8000 / USD:,.0f}" in line
    assert unpriced.as_of == WHEN  # dated as the market prices it stands on, not as the 2025 base
    assert quote(parts[4], "us", "USD", "new", RULES, indexes).basis == "new"


def test_too_few_pairs_give_no_index_and_china_indexes_against_the_same_base():
    parts = [kit("a", 700, 300.0), kit("unpriced", 2000)]
    assert price_indexes(parts, "us", "USD", RULES.budget.indexed_kinds, 2, BASE_BEFORE, RULES) == {}
    assert quote(parts[1], "us", "USD", "new", RULES, {}).basis == "converted"
    # China: 2026 yuan prices over the 2025 base (price_cny); a kit without one is its base x the median.
    china = [kit("a", 700), kit("b", 500), kit("unpriced", 2000)]
    for part, yuan in zip(china[:2], (2800, 1500), strict=True):
        part.spec["prices"] = {"cn": {"amount": yuan, "currency": "CNY", "as_of": WHEN, "source": "https://x.example"}}
    indexes = price_indexes(china, "cn", "CNY", RULES.budget.indexed_kinds, 2, BASE_BEFORE, RULES)
    assert round(indexes["memory_kit"].ratio, 6) == 3.5  # the median of 4 and 3
    estimated = quote(china[2], "cn", "CNY", "new", RULES, indexes)
    assert estimated.basis == "indexed" and estimated.amount_cny == 7000
    line = quote_line(china[2], estimated, "CNY", RULES)
    assert "ESTIMATED" in line and "converted" not in line and "China-market CNY price" in line


def without_us_price(catalog, part_id: str) -> Catalog:
    """The catalog with one part's US price taken out, as a part the market has no dated page for."""
    part = catalog.get(part_id)
    prices = {market: entry for market, entry in (part.get("prices") or {}).items() if market != "us"}
    return Catalog(parts={**catalog.parts, part_id: dataclasses.replace(part, spec={**part.spec, "prices": prices})})


def test_a_us_buyer_never_sees_the_96_gb_kit_below_the_64_gb_kits_2026_price(catalog):
    # The mixed-date ranking: a 2025 China price converted ($278) undercut the 64 GB kit's $900 of 2026.
    unpriced = without_us_price(catalog, "ddr5-5600-96gb-2x48")
    indexes = price_indexes(unpriced, "us", "USD", RULES.budget.indexed_kinds, RULES.budget.index_min_parts_count,
                            BASE_BEFORE, RULES)
    kit96 = quote(unpriced.get("ddr5-5600-96gb-2x48"), "us", "USD", "new", RULES, indexes)
    kit64 = quote(unpriced.get("ddr5-6000-64gb-2x32"), "us", "USD", "new", RULES, indexes)
    assert kit96.basis == "indexed" and kit96.amount_cny > kit64.amount_cny


def test_a_build_with_an_indexed_kit_says_its_price_is_estimated(catalog):
    unpriced = without_us_price(catalog, "ddr4-3200-16gb-2x8")
    build = recommend(answers(budget__currency="USD", budget__amount=2000.0), unpriced, today=WHEN)
    ram = build.component("memory_kit")
    assert ram.part_id == "ddr4-3200-16gb-2x8"
    assert any("ESTIMATED" in line for line in ram.reasoning)
    assert any("ESTIMATED" in warning and ram.name in warning for warning in build.warnings)


def test_a_group_has_its_own_index_and_a_2026_base_is_never_indexed():
    # Server RDIMMs (spot x9) and desktop kits (x3.5) are priced apart once each group has two pairs.
    desktop = [kit("d1", 500, 500 * 3.5 / USD), kit("d2", 700, 700 * 3.5 / USD), kit("d3", 300)]
    server = [kit("s1", 1400, 1400 * 9 / USD), kit("s2", 3000, 3000 * 9 / USD), kit("s3", 5000)]
    for part in server:
        part.spec["registered"] = True
    fresh = dataclasses.replace(kit("new", 1000), price_as_of=dt.date(2026, 2, 1))
    indexes = price_indexes([*desktop, *server, fresh], "us", "USD", RULES.budget.indexed_kinds, 2, BASE_BEFORE, RULES)
    assert round(quote(desktop[2], "us", "USD", "new", RULES, indexes).amount_cny) == 1050
    assert round(quote(server[2], "us", "USD", "new", RULES, indexes).amount_cny) == 45000
    assert quote(fresh, "us", "USD", "new", RULES, indexes).basis == "converted"
