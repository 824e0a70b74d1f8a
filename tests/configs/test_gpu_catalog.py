"""The GPU catalog for the China market: D variants with their own specs, availability flags, price sources."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from pth_top.configs.errors import ConfigFileError
from pth_top.configs.parts import load_catalog
from pth_top.configs.presets import load_build_preset
from pth_top.configs.render import render_build_text

NO_USER_DIR = Path("/nonexistent-user-catalog")
TODAY = dt.date(2026, 11, 30)
# Prices carried over from the first catalog (2025-06-01) or stand-ins named in a comment: no price page
# was found for them yet. Adding a price_source to one means removing it here.
PRICE_UNSOURCED = frozenset({
    "rtx-4070-ti-super-16gb", "rtx-4080-super-16gb", "rtx-a6000-48gb", "rtx-6000-ada-48gb", "l40s-48gb",
    "a100-40gb-pcie", "a100-80gb-pcie", "a100-40gb-sxm", "a100-80gb-sxm", "h100-80gb-pcie", "h200-141gb-nvl",
    "mi250x-128gb", "mi300x-192gb", "rtx-pro-6000-blackwell-server-96gb", "a10-24gb", "v100-16gb-pcie",
    "v100-32gb-pcie", "h100-94gb-nvl", "gh200-96gb", "gh200-144gb", "jetson-agx-orin-64gb",
})


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(NO_USER_DIR)


def write_user_gpu(tmp_path: Path, lines: str) -> Path:
    (tmp_path / "mine.toml").write_text(f'[[gpu]]\nid = "rtx-5080-16gb"\n{lines}\n', encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("part_id", [
    "rtx-4090-d-24gb", "rtx-5090-d-32gb", "rtx-5090-d-v2-24gb", "h20-96gb", "l20-48gb", "rtx-pro-6000-blackwell-96gb",
    "rtx-pro-6000-blackwell-server-96gb", "rtx-5060-ti-16gb", "rtx-5070-ti-16gb", "rtx-5080-16gb",
])
def test_china_market_cards_are_in_the_catalog(catalog, part_id):
    assert catalog.get(part_id) is not None


def test_d_variants_have_their_own_lower_tensor_specs(catalog):
    def spec(part_id, key):
        return catalog.get(part_id)[key]
    assert spec("rtx-4090-d-24gb", "bf16_dense_tflops") < spec("rtx-4090-24gb", "bf16_dense_tflops")
    assert spec("rtx-4090-d-24gb", "fp32_tflops") < spec("rtx-4090-24gb", "fp32_tflops")
    # The 5090 D keeps the 5090's cores (FP32) but not its tensor rate; the V2 also loses a quarter of the bus.
    assert spec("rtx-5090-d-32gb", "fp32_tflops") == spec("rtx-5090-32gb", "fp32_tflops")
    assert spec("rtx-5090-d-32gb", "bf16_dense_tflops") < spec("rtx-5090-32gb", "bf16_dense_tflops")
    assert spec("rtx-5090-d-v2-24gb", "bandwidth_gb_per_s") == 0.75 * spec("rtx-5090-d-32gb", "bandwidth_gb_per_s")
    assert spec("h20-96gb", "bf16_dense_tflops") < 0.2 * spec("h100-80gb-sxm", "bf16_dense_tflops")


def test_no_card_over_the_export_threshold_is_sold_new_in_china_without_a_licence(catalog):
    # ECCN 3A090.a (October 2023): total processing performance, dense TOPS x bits, of 4,800 or more needs a US
    # licence for China. The RTX 6000 Ada (FP8 728.5 dense: 5,828) was offered new there beside a barred L40S. A
    # GeForce card's catalog rates are at FP32 accumulate, half its FP16-accumulate peak (RTX 4090: 2 x 330.3 x 8 =
    # 5,285, the TPP its export ruling gives).
    for part in catalog.of_kind("gpu"):
        accumulate = 2 if part.get("form") == "consumer" else 1
        tpp = accumulate * max(16 * (part.get("fp16_dense_tflops") or 0), 8 * (part.get("fp8_dense_tflops") or 0))
        licensed = any("licence granted" in note for note in part.get("china_notes") or [])
        if tpp >= 4800 and not licensed:
            assert part.get("availability") != "new", (part.id, tpp)


def test_every_gpu_says_whether_it_is_sold_new_and_why_not(catalog):
    for part in catalog.of_kind("gpu"):
        assert part.get("availability") in ("new", "used_only", "not_sold_new_cn"), part.id
        if part["availability"] != "new":
            assert part.get("availability_reason", "").strip(), part.id


def test_end_of_life_and_export_licensed_cards_are_flagged(catalog):
    for part_id in ("rtx-3060-ti-8gb", "rtx-3090-24gb", "rtx-a6000-48gb", "a100-80gb-sxm", "v100-32gb-sxm2", "t4-16gb"):
        assert catalog.get(part_id)["availability"] == "used_only", part_id
    for part_id in ("rtx-4090-24gb", "rtx-5090-32gb", "h100-80gb-sxm", "h200-141gb-nvl", "l40s-48gb", "l4-24gb"):
        assert catalog.get(part_id)["availability"] == "not_sold_new_cn", part_id
    # Audit S: the L4 was sold new in China, under the 4,800 TPP line but over 3A090.a's density clause (6.6 >= 5.92).
    assert not catalog.get("l4-24gb").buyable("new", "cn") and catalog.get("l4-24gb").buyable("new", "us")
    # The H200 SXM is sold in China under the US licence of January 2026, and a China buyer reads its terms.
    licensed = catalog.get("h200-141gb-sxm")
    assert licensed.buyable("new", "cn") and "export licence granted January 2026" in licensed.notes_for("cn")[-1]


def test_prices_have_a_price_source_that_is_not_the_spec_page(catalog):
    gpus = catalog.of_kind("gpu")
    assert PRICE_UNSOURCED <= {part.id for part in gpus}
    for part in gpus:
        if part.id in PRICE_UNSOURCED:
            assert not part.get("price_source"), f"{part.id} has a price_source now: take it off PRICE_UNSOURCED"
            continue
        assert part.get("price_source", "").startswith(("https://", "http://")), part.id
        assert part["price_source"] != part.source, part.id
        assert isinstance(part.price_as_of, dt.date)


def test_buyable_keeps_cards_that_cannot_be_bought_new_out_of_new_builds(catalog):
    eol, licensed, current = catalog.get("rtx-3090-24gb"), catalog.get("h100-80gb-sxm"), catalog.get("rtx-5080-16gb")
    assert current.buyable("new") and current.buyable("used")
    assert not eol.buyable("new") and eol.buyable("used") and not eol.buyable("new", market="US")
    assert not licensed.buyable("new") and licensed.buyable("used") and licensed.buyable("new", market="US")
    # The China-only 5090 D cards: both still sold new in China (2026 channel quotes), never new elsewhere.
    for china_only in ("rtx-5090-d-v2-24gb", "rtx-5090-d-32gb"):
        part = catalog.get(china_only)
        assert part.buyable("new", market="CN") and not part.buyable("new", market="US")
    assert not catalog.get("rtx-4090-d-24gb").buyable("new")


def test_a_flag_without_its_reason_or_an_unknown_flag_is_refused(tmp_path):
    with pytest.raises(ConfigFileError, match="availability_reason"):
        load_catalog(write_user_gpu(tmp_path, 'availability = "used_only"'))
    with pytest.raises(ConfigFileError, match="availability.*new, used_only, not_sold_new_cn"):
        load_catalog(write_user_gpu(tmp_path, 'availability = "maybe"'))
    with pytest.raises(ConfigFileError, match="price_source"):
        load_catalog(write_user_gpu(tmp_path, 'price_source = "a shop near me"'))
    mine = load_catalog(write_user_gpu(tmp_path, 'availability = "used_only"\navailability_reason = "sold out"'))
    assert not mine.get("rtx-5080-16gb").buyable("new")


def pinned_gpu_build_text(catalog, part_id: str) -> str:
    from pth_top.configs.recommend import recommend  # imported here: its collection must not hide the other tests

    preset = load_build_preset("guide-personal")
    build = recommend(preset.answers, catalog, pins={**preset.pins, "gpu": (part_id, 1)}, today=TODAY)
    return render_build_text(build)


@pytest.mark.parametrize("part_id, correction", [
    # Datasheet dense BF16 / board power: 989 TFLOPS / 700 W and 756 / 350 W.
    ("h100-80gb-sxm", "about 1.4 TFLOPS/W"), ("h100-80gb-pcie", "about 2.2 TFLOPS/W"),
    ("rtx-3060-12gb", "does not pool them: CUDA runs on the RTX 3060 alone"),
    ("raspberry-pi-4b-8gb", "AVX2 is an x86 instruction set"),
])
def test_build_show_corrects_the_guide_where_the_card_is_chosen(catalog, part_id, correction):
    text = pinned_gpu_build_text(catalog, part_id)
    assert correction in text
    assert "350 TFLOPS/W" not in text or "is wrong" in text


def test_the_wizard_plans_on_the_memory_nvidia_smi_reports_not_the_size_sold(catalog):
    # An L40S is sold as 48 GB and ships with ECC on, which takes 1/16 of its GDDR6: nvidia-smi reports 46,068 MiB.
    from pth_top.configs.parts import gpu_memory_gib
    from pth_top.configs.recommend import recommend
    from tests.configs.builders import answers

    l40s = catalog.parts["l40s-48gb"]
    assert gpu_memory_gib(l40s) == pytest.approx(46068 / 1024)
    assert gpu_memory_gib(catalog.parts["rtx-4060-ti-16gb"]) == pytest.approx(16380 / 1024)
    build = recommend(answers(workload__preset="llama3-8b", task__mode="inference", task__precision="bf16",
                              budget__amount=200000.0), catalog, today=TODAY, pins={"gpu": ("l40s-48gb", 1)})
    assert build.gpu_usable_per_gpu_bytes == int(46068 * 2**20 * 0.95)
    assert any("46,068 MiB" in line for line in build.component("gpu").reasoning)


def test_an_end_of_life_card_is_sold_new_only_where_it_has_a_price(catalog):
    # old_stock_in says a dated new listing of its old stock is in the catalog for that market.
    for gpu in catalog.of_kind("gpu"):
        assert set(gpu.get("old_stock_in") or []) <= set(gpu.get("prices") or {}), gpu.id


def test_every_card_with_fp8_tensor_cores_lists_its_fp8_rate(catalog):
    # Ada, Hopper, Blackwell and CDNA3 run FP8 (vLLM's and SGLang's FP8 weights run FP8 matmuls on them); a card
    # without the figure prefilled at its 16-bit rate beside one that has it (review AB: an L40S at 2x, an RTX PRO
    # 6000 Blackwell not).
    fp8_ids = ("rtx-40", "rtx-50", "rtx-pro-", "rtx-6000-ada", "l4-", "l20-", "l40s", "h100", "h200", "h20-",
               "gh200", "b200", "mi300x", "dgx-spark", "jetson-agx-thor")
    cards = [part for part in catalog.of_kind("gpu") if part.id.startswith(fp8_ids)]
    assert len(cards) > 30 and all(part.get("fp8_dense_tflops", 0) > 0 for part in cards), \
        [part.id for part in cards if not part.get("fp8_dense_tflops")]
    before = [part for part in catalog.of_kind("gpu") if part.id.startswith(("rtx-30", "a100", "a10-", "v100", "t4"))]
    assert before and not any(part.get("fp8_dense_tflops") for part in before)


def test_no_card_runs_fp8_more_than_twice_its_16_bit_tensor_rate(catalog):
    # Audit YJ2: Jetson AGX Thor listed FP8 517 beside BF16 128 (one figure with FP32 accumulate, the other not):
    # FP8 tensor cores run twice the 16-bit rate on every generation that has them, so the ratio is 2 at most.
    for gpu in catalog.of_kind("gpu"):
        fp8, bf16 = gpu.spec.get("fp8_dense_tflops", 0), gpu.spec.get("bf16_dense_tflops", 0)
        if fp8 and bf16:
            assert fp8 <= 2.05 * bf16, (gpu.id, fp8, bf16)


def test_every_volta_card_says_what_its_software_support_is_now(catalog):
    # Audit CH60: 8 used V100s were bought for a 7B fine-tune with no word that PyTorch 2.8+ builds Volta only into
    # its CUDA 12.6 wheels and CUDA 13 drops it.
    volta = [gpu for gpu in catalog.of_kind("gpu") if gpu.get("compute_capability") == 7.0]
    assert len(volta) >= 4
    assert all(any("CUDA 13 drops it" in note for note in gpu.notes_for("us")) for gpu in volta)
