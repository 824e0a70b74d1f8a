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

# A share of the GPUs' time spent on prefills from which the build warns that the sustained rate is the one to read.
PREFILL_SHARE_WARNING = 0.25


def fresh_prompts(out: sp.Prediction, batch: int, prompt: int, generated: int, first_s: float, compute_s: float
                  ) -> None:
    """Adds the sustained rate where each of `batch` streams, its `generated` tokens done, sends a fresh
    `prompt`-token prompt (no prefix-cache hit): a cycle is the streams' decode plus all their prefills, each at its
    compute (`compute_s`), the weights read at least once (`first_s`, one prompt alone)."""
    per_stream = out.figures.get("decode_tokens_per_s_per_stream", 0.0)
    if batch < 2 or generated <= 0 or per_stream <= 0 or first_s <= 0:
        return
    decode_s, prefills_s = generated / per_stream, max(batch * compute_s, first_s)
    sustained = generated / (decode_s + prefills_s)
    share = prefills_s / (decode_s + prefills_s)
    out.figures["sustained_tokens_per_s_per_stream"] = sustained
    out.figures["sustained_tokens_per_s_aggregate"] = sustained * batch
    out.figures["prefill_share"] = share
    out.formula.append(
        f"under load, a fresh {prompt:,}-token prompt a request (no prefix-cache hit): {generated:,} tokens at "
        f"{per_stream:,.1f}/s = {sp.duration(decode_s)} of decode + {batch} prefills' compute, "
        f"{sp.duration(prefills_s)}, a cycle: ~{sustained:,.1f} tokens/s per stream ({sustained * batch:,.0f} for "
        "all), "
        f"prefills {share:.0%} of the GPU time (prefill and decode not overlapped: a floor)")
    out.summary.append(f"~{sustained:,.1f} tokens/s per stream sustained when every request brings a fresh "
                       f"{prompt:,}-token prompt (prefills {share:.0%} of the time); the first token's time above is "
                       "one prompt on an idle server")
    if share >= PREFILL_SHARE_WARNING:
        out.warnings.append(
            f"prefill-bound under load: with a fresh {prompt:,}-token prompt a request, the {batch} streams' prefills "
            f"take {share:.0%} of the GPU time and each stream gets ~{sustained:,.1f} tokens/s, not "
            f"~{per_stream:,.1f}; prefix caching (a chat's earlier turns, a shared system prompt) or shorter prompts "
            "keep it nearer the idle rate, more GPUs (tensor parallel) shorten the prefills")


def decode_summary(out: sp.Prediction, batch: int, prompt: int, first_s: float, where: str = "") -> float:
    """The decode headline: tokens/s a stream (and for the whole batch) and the first token; the per-stream rate."""
    out.figures["first_token_s"] = first_s
    per_stream, aggregate = out.figures["decode_tokens_per_s_per_stream"], out.figures["decode_tokens_per_s_aggregate"]
    streams = f" ({aggregate:,.0f} for all {batch})" if batch > 1 else ""
    shown = f"{per_stream:,.1f}" if per_stream >= 1 else sp.rate_text(per_stream)
    out.summary.append(f"~{shown} tokens/s per stream{streams}{where}; first token after a {prompt:,}-token "
                       f"prompt in ~{sp.duration(first_s)}")
    return per_stream
