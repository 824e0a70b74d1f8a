"""A language model's decode headline, and a server's rate under load: every request brings a fresh prompt, and its
prefill takes the GPUs from the others.

A continuous-batching engine (vLLM, SGLang, llama.cpp's server slots) runs each new prompt's prefill, in chunks,
between the decode steps of the streams already running. Prefills are compute-bound and a decode step is
bandwidth-bound, so they are counted one after the other (what overlaps is not counted: the figure is a floor).
NVIDIA NIM's Llama 3.3 70B FP8 on 2 x H100 (5,000 prompt tokens, 500 out): 623 tokens/s at 25 users and 814 at 50,
where the idle decode alone would give ~860 and ~1,300; counted this way ~544 and ~691.
"""

from __future__ import annotations

from pth_top.configs import speed as sp


def fresh_prompts(out: sp.Prediction, batch: int, prompt: int, generated: int, first_s: float, compute_s: float,
                  cached: float = 0.0) -> None:
    """Adds the sustained rate where each of `batch` streams, its `generated` tokens done, sends a `prompt`-token
    prompt, `cached` of it in the prefix cache: a cycle is the streams' decode plus all their prefills, each at the
    compute of its uncached rest (`compute_s`), the weights read at least once (`first_s`, a whole prompt's)."""
    per_stream = out.figures.get("decode_tokens_per_s_per_stream", 0.0)
    if batch < 2 or generated <= 0 or per_stream <= 0 or first_s <= 0:
        return
    decode_s = generated / per_stream
    prefills_s = max(batch * compute_s, first_s * (1 - cached))
    sustained = generated / (decode_s + prefills_s)
    share = prefills_s / (decode_s + prefills_s)
    out.figures["sustained_tokens_per_s_per_stream"] = sustained
    out.figures["sustained_tokens_per_s_aggregate"] = sustained * batch
    out.figures["prefill_share"] = share
    fresh = f"{1 - cached:.0%} of each {prompt:,}-token prompt" if cached else f"a fresh {prompt:,}-token prompt"
    how = "the rest in the prefix cache" if cached else "no prefix-cache hit"
    out.formula.append(
        f"under load, {fresh} a request to prefill ({how}; task.prompt_cache_hit_fraction): {generated:,} tokens at "
        f"{per_stream:,.1f}/s = {sp.duration(decode_s)} of decode + {batch} prefills' compute, "
        f"{sp.duration(prefills_s)}, a cycle: ~{sustained:,.1f} tokens/s per stream ({sustained * batch:,.0f} for "
        f"all), prefills {share:.0%} of the GPU time (prefill and decode not overlapped: a floor)")
    out.summary.append(f"~{sustained:,.1f} tokens/s per stream under load, with {fresh} a request to prefill "
                       f"(prefills {share:.0%} of the time); the first token's time above is one prompt on an idle "
                       "server")
    if share >= sp.PREFILL_SHARE_WARNING:
        out.warnings.append(
            f"prefill-bound under load: with {fresh} a request to prefill, the {batch} streams' prefills take "
            f"{share:.0%} of the GPU time and each stream gets ~{sustained:,.1f} tokens/s, not ~{per_stream:,.1f}; "
            "prefix caching (a chat's earlier turns, a shared system prompt: task.prompt_cache_hit_fraction) or "
            "shorter prompts keep it nearer the idle rate, more GPUs (tensor parallel) shorten the prefills")


def decode_summary(out: sp.Prediction, batch: int, prompt: int, first_s: float, where: str = "") -> float:
    """The decode headline: tokens/s a stream (and for the whole batch) and the first token; the per-stream rate."""
    out.figures["first_token_s"] = first_s
    per_stream, aggregate = out.figures["decode_tokens_per_s_per_stream"], out.figures["decode_tokens_per_s_aggregate"]
    streams = f" ({aggregate:,.0f} for all {batch})" if batch > 1 else ""
    shown = f"{per_stream:,.1f}" if per_stream >= 1 else sp.rate_text(per_stream)
    out.summary.append(f"~{shown} tokens/s per stream{streams}{where}; first token after a {prompt:,}-token "
                       f"prompt in ~{sp.duration(first_s)}")
    return per_stream


def slow_under_load(figures: dict[str, float]) -> bool:
    """Whether a server's predicted decode under load is under SLOW_DECODE_TOKENS_PER_S a stream (no figure: not)."""
    return 0 < figures.get("sustained_tokens_per_s_per_stream", 0.0) < sp.SLOW_DECODE_TOKENS_PER_S
