"""The market is the buyer's: its prices (new and used, each dated and sourced) and its availability."""

from __future__ import annotations

import datetime as dt

import pytest

from pth_top.configs.build_file import dumps_build, loads_build
from pth_top.configs.market import quote, quote_line, used_quote
from pth_top.configs.parts import load_catalog
from pth_top.configs.recommend import recommend
from pth_top.configs.render import render_build_text
from pth_top.configs.rules import load_rules
from tests.configs.builders import answers

TODAY = dt.date(2026, 5, 10)
RULES = load_rules()


def china_only(catalog) -> set[str]:
    return {part.id for part in catalog.of_kind("gpu") if part.get("sold_new_in") == ["cn"]}


def test_a_us_buyer_at_2000_dollars_gets_us_prices_in_dollars_and_no_china_only_card(catalog):
    build = recommend(answers(budget__currency="USD", budget__amount=2000.0), catalog, today=TODAY)
    gpu = build.component("gpu")
    assert not china_only(catalog) & set(build.alternatives["gpu"]), "a China-only SKU offered in the US"
    assert {"rtx-4090-d-24gb", "rtx-5090-d-v2-24gb", "h20-96gb", "l20-48gb"} <= china_only(catalog)
    part = catalog.get(gpu.part_id)
    us = part.get("prices", {}).get("us")
    assert us is not None, f"{gpu.name} has no US price, yet it leads a US build"
    assert round(gpu.unit_price_cny / RULES.currency.cny_per_usd) == us["amount"]  # the US price, not ¥ converted
    text = render_build_text(build)
    assert f"${us['amount']:,.0f}" in text and "¥" not in text.split("Reasoning")[0]
    assert text.startswith("Prices and availability are the US market's")
    assert any(us["source"] in line and str(us["as_of"]) in line for line in gpu.reasoning)
    assert build.total_price_cny <= build.budget_cny


def test_a_china_buyer_gets_no_h100_new_and_a_us_buyer_no_china_cards(catalog):
    job = {"workload__preset": "llama-7b", "task__method": "lora", "budget__amount": 3_000_000.0}
    china = recommend(answers(**job), catalog, today=TODAY).alternatives["gpu"]
    us = recommend(answers(**job, budget__currency="USD"), catalog, today=TODAY).alternatives["gpu"]
    assert not {gpu for gpu in china if gpu.startswith(("h100", "h200-141gb-nvl", "b200", "a100"))}, china
    assert "rtx-4090-24gb" not in china and "rtx-4090-d-24gb" not in us and "l20-48gb" not in us
    assert "rtx-pro-6000-blackwell-96gb" in us and "rtx-pro-6000-blackwell-96gb" not in china and "l20-48gb" in china


def test_an_explicit_market_beats_the_currency(catalog):
    # A yuan budget spent in the US: US availability, prices converted to yuan and said to be.
    build = recommend(answers(budget__market="us", budget__amount=20000.0), catalog, today=TODAY)
    assert not china_only(catalog) & set(build.alternatives["gpu"])
    assert build.market == "us" and any("CONVERTED" in warning for warning in build.warnings)


def test_a_used_3090_is_priced_from_its_dated_listing_not_a_share_of_new(catalog):
    card = catalog.get("rtx-3090-24gb")
    listed = card["used_prices"]["us"]
    used = quote(card, "us", "USD", "used", RULES)
    assert (used.amount, used.currency, used.basis) == (listed["amount"], "USD", "used")
    assert used.as_of == listed["as_of"] and used.source.startswith("https://")


def test_no_used_price_is_a_fixed_share_of_new(catalog):
    # A used card is priced by a dated listing: the market's own, else the newest other market's, converted and
    # said so; a card no listing prices costs what it costs new, and the build says so.
    for card in catalog.of_kind("gpu"):
        listings = card.get("used_prices") or {}
        for market, currency in (("cn", "CNY"), ("us", "USD"), ("eu", "EUR")):
            used = quote(card, market, currency, "used", RULES)
            if used.basis.startswith("used"):
                entry = listings[used.market]
                assert (used.amount, used.as_of, used.source) == (entry["amount"], entry["as_of"], entry["source"])
                assert used.basis == "used" or "CONVERTED from the" in quote_line(card, used, currency, RULES)
            else:
                # no listing for this market, or a new card sold here for less than the used one
                assert used == quote(card, market, currency, "new", RULES), (card.id, market)
                sold_here = card.buyable("new", market) or market in (card.get("prices") or {})
                assert used_quote(card, market, currency, RULES) is None or sold_here, (card.id, market)
            # China's used market is its own for a card not sold new there (export rules or age): no listing abroad
            # prices it; one sold new there takes one, converted (audit YA2: a used RTX 3060 priced new, CNY 2,399).
            assert market != "cn" or used.market == "cn" or not used.basis.startswith("used") \
                or card.get("availability") == "new", card.id
    assert quote(catalog.get("rtx-3060-12gb"), "cn", "CNY", "used", RULES).amount_cny < 0.75 * quote(
        catalog.get("rtx-3060-12gb"), "cn", "CNY", "new", RULES).amount_cny
    unlisted = catalog.get("rtx-pro-4000-blackwell-24gb")
    assert not unlisted.get("used_prices")
    build = recommend(answers(budget__currency="USD", budget__amount=5000.0, budget__condition="used"), catalog,
                      pins={"gpu": (unlisted.id, 1)}, today=TODAY)
    assert build.component("gpu").part_id == unlisted.id
    assert any(f"no used listing in the catalog for this market: {unlisted.name} priced new" in line
               for line in build.warnings)


def test_a_part_without_a_price_in_the_market_is_converted_and_the_warning_names_it(catalog):
    build = recommend(answers(budget__currency="USD", budget__amount=2000.0), catalog, today=TODAY)
    cpu = build.component("cpu")
    assert any("CONVERTED" in line for line in cpu.reasoning)
    assert any("CONVERTED" in warning and cpu.name in warning for warning in build.warnings)


def test_a_dollar_build_file_keeps_its_market_and_currency(catalog):
    build = recommend(answers(budget__currency="USD", budget__amount=2000.0), catalog, today=TODAY)
    created = dt.datetime(2026, 5, 10, tzinfo=dt.timezone.utc)
    loaded, _, _ = loads_build(dumps_build(build, created=created, tool_version="0"))
    assert (loaded.market, loaded.currency) == ("us", "USD")
    assert render_build_text(loaded) == render_build_text(build)


def test_a_yuan_price_converted_from_another_market_is_said_to_be_so_in_china_too(catalog):
    # The RTX PRO 4000's yuan figure was its US launch MSRP converted: a China buyer gets its newest US price,
    # converted and marked, not "China market, new" at the 2025 launch price.
    card = catalog.get("rtx-pro-4000-blackwell-24gb")
    china = quote(card, "cn", "CNY", "new", RULES)
    assert china.basis == "converted" and china.market == "us" and china.amount == 2199
    assert "CONVERTED from the US new price $2,199" in quote_line(card, china, "CNY", RULES)
    spark = catalog.get("dgx-spark-128gb")  # US only: an EU buyer's euros come from its dollars, not via yuan
    euro = quote(spark, "eu", "EUR", "new", RULES)
    assert "CONVERTED from the US new price $4,700" in quote_line(spark, euro, "EUR", RULES)
    pi = catalog.get("raspberry-pi-4b-8gb")  # priced in the buyer's own market and currency: not converted
    assert quote(pi, "us", "USD", "new", RULES).basis == "new"


def test_a_users_own_yuan_price_for_a_converted_part_is_a_china_price(tmp_path):
    # The shipped Spark's yuan figure converts its US price; a user catalog that gives a yuan price of its own
    # (a local quote) is read as a China price, not shown as "CONVERTED from the US".
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "mine.toml").write_text(
        '[[gpu]]\nid = "dgx-spark-128gb"\nprice_cny = 31999\nprice_as_of = 2026-11-20\n', encoding="utf-8")
    spark = load_catalog(tmp_path / "catalog").get("dgx-spark-128gb")
    china = quote(spark, "cn", "CNY", "new", RULES)
    assert china.basis == "new" and china.amount == 31999 and china.market == "cn"


def test_a_server_priced_only_in_china_costs_a_us_buyer_at_least_its_gpus_us_price(catalog):
    # The HGX H200's only price is China's CNY 1.5 million (USD 214,721 converted) where one H200 SXM alone is
    # USD 35,000 in the US (gpus.toml): eight of them are the least the machine can cost there, said ESTIMATED.
    def server_build(currency: str, amount: float, market: str = "auto"):
        job = answers("team_training", workload__preset="llama-70b", workload__batch_size=8, scale__gpu_count=8,
                      scale__sharding="zero3", budget__currency=currency, budget__amount=amount,
                      budget__market=market)
        return recommend(job, catalog, pins={"gpu": ("h200-141gb-sxm", 8)}, today=TODAY)

    us = server_build("USD", 600000.0)
    server = us.component("system")
    # With its host's parts: SemiAnalysis's DGX H100 bill of materials, $32,010 beside the GPUs (audit BZ57).
    host = 32_010 * RULES.currency.cny_per_usd
    assert server.part_id == "hgx-h200-8gpu"
    assert server.unit_price_cny == pytest.approx(8 * 35000 * RULES.currency.cny_per_usd + host)
    assert "ESTIMATED as its 8 x NVIDIA H200" in server.reasoning[-1] and "$32,010 for its host" in server.reasoning[-1]
    assert any(line.startswith("ESTIMATED at its GPUs' own US-market price") for line in us.warnings)
    assert not any("prepayment" in line for line in us.reasoning + us.component("gpu").reasoning)  # China's terms
    china_build = server_build("CNY", 4000000.0)
    china = china_build.component("system")
    assert china.unit_price_cny == 1500000 and "China market, new" in china.reasoning[-1]
    terms = [line for component in china_build.components for line in component.reasoning if "full prepayment" in line]
    assert len(terms) == 1  # said once, on the GPU, not again on its server
    in_yuan = server_build("CNY", 4000000.0, market="us").component("system")  # the market's floor, any currency
    assert in_yuan.unit_price_cny == server.unit_price_cny


def test_a_parts_china_only_notes_reach_china_market_buyers_only(catalog):
    card = catalog.get("rtx-pro-4000-blackwell-24gb")
    assert any("assumed sold new in China" in note for note in card.notes_for("cn"))
    assert not any("China" in note for note in card.notes_for("us") + card.notes_for("eu"))


def test_a_server_priced_before_its_gpus_2026_price_costs_at_least_its_gpus(catalog):
    # The DGX H100's US price is its $199,000 list of 2025; one H100 SXM alone is $30,000 new in the US in July
    # 2026 (gpus.toml), so eight are the least the machine costs now, said ESTIMATED. The DGX B200's $515,000
    # (March 2025) stays: more than its eight B200s at $40,000.
    job = answers("team_training", workload__preset="llama-70b", workload__batch_size=8, scale__gpu_count=8,
                  scale__sharding="zero3", budget__currency="USD", budget__amount=900000.0)
    h100 = recommend(job, catalog, pins={"gpu": ("h100-80gb-sxm", 8)}, today=TODAY).component("system")
    assert h100.part_id == "nvidia-dgx-h100"
    assert h100.unit_price_cny == pytest.approx((8 * 30000 + 32_010) * RULES.currency.cny_per_usd)
    assert "is of 2025-06-01, older than its GPU's, and is less than its GPUs and host" in h100.reasoning[-1]
    b200 = recommend(job, catalog, pins={"gpu": ("b200-180gb-sxm", 8)}, today=TODAY).component("system")
    assert b200.part_id == "nvidia-dgx-b200" and b200.unit_price_cny == catalog.get("nvidia-dgx-b200").price_cny


def test_a_used_listing_dearer_than_new_is_said_so_not_called_missing(catalog):
    # The RTX 4080 Super's US best resale deal ($882, July 2026) is above its new clearance price ($875, May).
    card = catalog.get("rtx-4080-super-16gb")
    assert quote(card, "us", "USD", "used", RULES) == quote(card, "us", "USD", "new", RULES)
    build = recommend(answers(budget__currency="USD", budget__amount=4000.0, budget__condition="used"), catalog,
                      pins={"gpu": (card.id, 1)}, today=TODAY)
    assert any(f"used listings above the new price for {card.name}: priced new" in line for line in build.warnings)
    assert not any("no used listing in the catalog for" in line for line in build.warnings)


def test_a_used_only_card_without_a_china_listing_keeps_its_china_figure_not_a_us_listing(catalog):
    card = catalog.get("rtx-a6000-48gb")  # used only; a US used listing, none in China
    china = quote(card, "cn", "CNY", "used", RULES)
    assert "cn" not in card["used_prices"] and (china.market, china.amount) == ("cn", card.price_cny)
    build = recommend(answers(budget__amount=60000.0, budget__condition="used"), catalog,
                      pins={"gpu": (card.id, 1)}, today=TODAY)
    assert any(f"{card.name} priced at the catalog figure" in line for line in build.warnings), build.warnings


def test_an_eu_buyer_pays_import_vat_on_a_used_listing_abroad(catalog):
    # A used RTX 5090 listed only in the US crosses the border: an EU buyer pays the listing, converted, plus the
    # EU's VAT (24 %, the basis of its shop prices), and the line says so; a US buyer pays the listing.
    card = catalog.get("rtx-5090-32gb")
    listing = card.get("used_prices")["us"]
    assert "eu" not in card.get("used_prices")
    us = quote(card, "us", "USD", "used", RULES)
    eu = quote(card, "eu", "EUR", "used", RULES)
    assert us.amount_cny == listing["amount"] * RULES.currency.cny_per_usd
    assert eu.amount_cny == us.amount_cny * 1.24 and eu.abroad and eu.amount == listing["amount"]
    assert "plus 24% import VAT" in quote_line(card, eu, "EUR", RULES)


def test_an_eu_buyer_pays_an_h200_server_at_least_its_gpus_us_price_with_vat_not_chinas(catalog):
    # The H200 is CNY 190,000 in China under its export licence and US$35,000 in the US; an EU buyer with no EU price
    # pays the US one plus 24 % VAT (EUR 36.6k a GPU), and the HGX server priced only in China is floored at that.
    h200 = catalog.get("h200-141gb-sxm")
    eu, us = quote(h200, "eu", "EUR", "new", RULES), quote(h200, "us", "USD", "new", RULES)
    assert eu.market == "us" and eu.amount_cny == pytest.approx(us.amount_cny * 1.24)
    job = answers("team_training", workload__preset="llama-70b", workload__batch_size=8, scale__gpu_count=8,
                  scale__sharding="zero3", budget__currency="EUR", budget__amount=600000.0)
    build = recommend(job, catalog, pins={"gpu": ("h200-141gb-sxm", 8)}, today=TODAY)
    server = build.component("system")
    assert server.part_id == "hgx-h200-8gpu"
    assert server.unit_price_cny == pytest.approx(8 * eu.amount_cny + 32_010 * RULES.currency.cny_per_usd * 1.24)
    assert "plus 24% import VAT converted" in server.reasoning[-1], server.reasoning[-1]
    assert any(line.startswith("ESTIMATED at its GPUs' US-market price converted") for line in build.warnings)


def test_a_china_lab_serves_deepseek_r1_in_fp8_on_the_licensed_hgx_h200(catalog):
    # DeepSeek-R1 FP8 for 8 users at 16k on 8 GPUs (issue 276 of deepseek-ai/DeepSeek-R1: "FP8部署, 8 卡 H20, 大概用了
    # 700 多 G 显存"). The H20 is no longer sold new (export licence and Beijing's purchase questions, 2025); the H200
    # is since January 2026's licence, at CNY 1.5 million a server: within CNY 2.5 million, and FP8 kept.
    job = answers("inference_server", workload__preset="deepseek-v3", task__mode="inference", task__precision="int8",
                  task__quantization="fp8", task__serving_engine="sglang", task__generated_tokens=1024,
                  workload__batch_size=8, workload__sequence_length=16384, scale__gpu_count=8,
                  budget__amount=2500000.0)
    build = recommend(job, catalog, today=TODAY)
    assert build.feasible and build.component("system").part_id == "hgx-h200-8gpu", build.blockers
    assert "in the server's price" in render_build_text(build)  # the SXM modules' line, not "¥0"


def test_no_card_for_sale_here_names_the_ones_that_would_hold_the_job_and_why_not(catalog):
    # DeepSeek-V3 in bf16 on 8 GPUs (157 GiB each) for a China lab: the H200 (licensed) is short; the B200's HGX server
    # would hold it, export rules bar it; "no GPU in this catalog holds that much" would be false. A card that no
    # machine of this many GPUs can take (an SXM module without such a server) is not named.
    job = answers("inference_server", workload__preset="deepseek-v3", task__mode="inference", task__precision="bf16",
                  workload__batch_size=1, workload__sequence_length=4096, scale__gpu_count=8,
                  budget__amount=30_000_000.0)
    line = recommend(job, catalog, today=TODAY).blockers[0]
    assert "no GPU sold new in the China market holds that much" in line and "in this catalog" not in line, line
    assert "NVIDIA B200 180GB SXM (HGX B200): above the US export threshold for China" in line, line
    one_card = job.with_value("scale", "gpu_count", 1).with_value("workload", "preset", "llama-70b")
    assert "no GPU in this catalog holds that much" in recommend(one_card, catalog, today=TODAY).blockers[0]


def test_a_us_shop_price_converted_for_an_eu_buyer_carries_eu_vat_as_a_us_listing_does(catalog):
    # US retail prices are before sales tax; EU prices include VAT. The Jetson AGX Thor's $5,499 (no EU price) costs
    # an EU buyer that plus 24 % VAT, as a used listing from the US does: new and used compare on one basis.
    thor = catalog.get("jetson-agx-thor-128gb")
    eu, us = quote(thor, "eu", "EUR", "new", RULES), quote(thor, "us", "USD", "new", RULES)
    assert eu.basis == "converted" and eu.amount_cny == pytest.approx(us.amount_cny * 1.24)
    assert "plus 24% import VAT" in quote_line(thor, eu, "EUR", RULES)
    # A China price converted for the EU buyer carries China's 13 % VAT: that out, the EU's 24 % in.
    h200 = catalog.get("h200-141gb-nvl")
    eu_h200 = quote(h200, "eu", "EUR", "new", RULES)
    assert eu_h200.amount_cny == pytest.approx(h200.price_cny / 1.13 * 1.24)
    assert "less its 13% VAT, plus 24% import VAT" in quote_line(h200, eu_h200, "EUR", RULES)


def test_an_eu_shop_price_converted_for_a_us_buyer_loses_its_vat(catalog):
    # The EPYC 7543P's only price is Greek retail, 24 % VAT included; a US shop price is before sales tax, so a US
    # buyer paid the Greek VAT on top of what a US shop would ask (~$418 a build, audit CC).
    epyc = catalog.get("epyc-7543p")
    us, eu = quote(epyc, "us", "USD", "new", RULES), quote(epyc, "eu", "EUR", "new", RULES)
    assert eu.market == "eu" and us.market == "eu" and us.basis == "converted"
    assert us.amount_cny == pytest.approx(eu.amount_cny / 1.24) and not us.import_vat_fraction
    assert "less its 24% VAT" in quote_line(epyc, us, "USD", RULES)


def test_a_china_buyer_pays_chinas_13_percent_vat_on_a_us_shop_price(catalog):
    # China's retail prices include its 13 % VAT (import VAT at the border, the same rate); a part priced only in
    # the US (the RTX PRO 4000 Blackwell, $2,199 before sales tax) costs a China buyer that converted plus 13 %.
    card = catalog.get("rtx-pro-4000-blackwell-24gb")
    china, us = quote(card, "cn", "CNY", "new", RULES), quote(card, "us", "USD", "new", RULES)
    assert "cn" not in card.get("prices") and china.market == "us"
    assert china.amount_cny == pytest.approx(us.amount_cny * 1.13) and china.import_vat_fraction == 0.13
    assert "plus 13% import VAT" in quote_line(card, china, "CNY", RULES)
    # A China-market price is the shop's, VAT included: none added.
    assert not quote(catalog.get("rtx-5090-d-v2-24gb"), "cn", "CNY", "new", RULES).import_vat_fraction


def test_a_us_buyer_pays_the_max_q_at_its_us_msrp_not_a_french_listing_converted(catalog):
    # The RTX PRO 6000 Max-Q's only 2026 price is LDLC's EUR 17,709.95; converted, a US buyer paid ~$21k a card, and
    # four of them made a $93k remedy, where NVIDIA's MSRP is the Workstation Edition's $8,565.
    card = catalog.get("rtx-pro-6000-blackwell-max-q-96gb")
    us = quote(card, "us", "USD", "new", RULES)
    assert (us.amount, us.currency, us.market) == (8565, "USD", "us")


def test_a_china_used_build_prices_the_rtx_5090_at_a_2026_china_quote_not_its_pre_launch_figure(catalog):
    # Not sold new in China (export threshold) and no China used listing: a used build there is priced at the China
    # figure, which was the CNY 16,499 pre-launch MSRP, ~half of any 2026 China quote (grey imports at CNY 34,615).
    card = catalog.get("rtx-5090-32gb")
    china = quote(card, "cn", "CNY", "used", RULES)
    assert china.amount == 34615 and china.as_of.year == 2026 and china.market == "cn"
    assert not card.buyable("new", "cn") and card.buyable("used", "cn")


def test_no_card_here_at_this_gpu_count_names_the_module_that_holds_it_in_a_server_of_another(catalog):
    # Qwen3-235B-A22B FP8 on 4 GPUs for a China lab: 58 GiB a GPU. The licensed H200 holds that, in its 8-GPU HGX
    # server only; "no GPU sold new in the China market holds that much" was false without the GPU count.
    job = answers("inference_server", workload__preset="custom", workload__parameters=235_093_634_560,
                  workload__active_parameters=22_140_000_000, workload__experts_count=128,
                  workload__experts_per_token=8, workload__layers=94, workload__hidden_size=4096,
                  workload__attention_heads=64, workload__kv_heads=4, workload__head_dim=128,
                  workload__intermediate_size=12288, workload__gated_mlp=True, workload__vocabulary_size=151_936,
                  workload__sequence_length=32768, workload__batch_size=1, task__mode="inference",
                  task__precision="int8", task__quantization="fp8", task__serving_engine="sglang",
                  scale__gpu_count=4, budget__amount=2_000_000.0)
    line = recommend(job, catalog, today=TODAY).blockers[0]
    assert "holds that much in a machine of 4 GPUs" in line and "H200 141GB SXM does, in a server of 8" in line, line


def test_an_eu_price_kept_as_the_yuan_base_is_the_eu_buyers_own_not_a_us_one_converted(catalog):
    # The Raspberry Pi SD card's base price is an EU one (price_cny_converted_from = "eu"): an EU buyer pays it, new,
    # not its US price plus VAT.
    card = catalog.get("raspberry-pi-sd-card-64gb")
    eu = quote(card, "eu", "EUR", "new", RULES)
    assert card.get("price_cny_converted_from") == "eu" and (eu.basis, eu.market) == ("new", "eu")


def test_an_end_of_life_card_with_a_dated_new_listing_is_sold_new_in_that_market_only(catalog):
    # Audit CC: the RTX 4060 Ti 16GB is out of production (used only), yet a US shop sold it new at $425 in May 2026;
    # it was never offered new there, and a $584 RTX 5060 Ti 16GB was bought instead.
    card = catalog.get("rtx-4060-ti-16gb")
    assert card.buyable("new", "us") and not card.buyable("new", "eu") and not card.buyable("new", "cn")
    assert quote(card, "us", "USD", "new", RULES).amount == 425


def test_a_used_v100_pcie_in_china_is_priced_as_a_pcie_card_not_an_sxm2_module(catalog):
    # Audit KK: the 16 GB PCIe card was priced CNY 541, the SXM2 module's used price (a module that needs an SXM2
    # board), labelled new; a Chengdu dealer's 2026 floor for a single V100 is CNY 3,000.
    job = answers("inference_server", workload__preset="llama3-8b", task__mode="inference", task__precision="bf16",
                  budget__amount=20000.0, budget__condition="used")
    gpu = recommend(job, catalog, pins={"gpu": ("v100-16gb-pcie", 1)}, today=dt.date(2026, 11, 1)).component("gpu")
    assert gpu.unit_price_cny == 3000 and any("China used market" in line for line in gpu.reasoning), gpu.reasoning


def test_a_us_used_buyer_gets_the_used_16_gb_workstation_card_for_a_16_gb_job(catalog):
    # Llama 3.1 8B in Q8_0 at 16k on llama.cpp, $1,000 used (a case included): 10.5 GiB. The RTX A4000 (16 GB,
    # 448 GB/s, one slot) is $400 used (specpicks, 2026), where 16 GB GeForce cards cost more or read at 288 GB/s.
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=8_030_261_248,
                  workload__layers=32, workload__hidden_size=4096, workload__attention_heads=32, workload__kv_heads=8,
                  workload__intermediate_size=14336, workload__gated_mlp=True, workload__vocabulary_size=128_256,
                  workload__sequence_length=16384, workload__batch_size=1, task__mode="inference",
                  task__precision="int8", task__serving_engine="llama_cpp", budget__amount=1000.0,
                  budget__currency="USD", budget__condition="used")
    build = recommend(job, catalog, today=dt.date(2026, 12, 1))
    gpu = build.component("gpu")
    assert build.feasible and gpu.part_id == "rtx-a4000-16gb"
    assert any(line.startswith("price $400: US used market") for line in gpu.reasoning), gpu.reasoning
