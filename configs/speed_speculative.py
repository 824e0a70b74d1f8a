"""Speculative decoding (EAGLE, a model's MTP heads): a draft proposes tokens, the model verifies them in one pass."""

from __future__ import annotations

# Each drafted token lengthens a step by ~0.17 of it (the draft's own sequential pass and LM head, the verify's extra
# queries): SGLang's MTP on DeepSeek-V3, 16 H200 at 2 requests a rank of 64k (lmsys.org/blog/2025-07-17-mtp), 51.0
# tokens/s a rank without it, 81.5 with 2 drafted a step accepting 2.18, 82.0 with 3 accepting 2.44 (0.18 and 0.17).
DRAFT_TOKEN_STEP_SHARE = 0.17


def speculative_factor(draft_tokens: int, accept_length: float) -> float:
    """Tokens a stream gains a step over plain decoding: the accepted ones, over the step the draft lengthens."""
    return accept_length / (1.0 + DRAFT_TOKEN_STEP_SHARE * draft_tokens) if draft_tokens else 1.0


def speculative_text(draft_tokens: int, accept_length: float) -> str:
    """The formula line for it."""
    return (f"speculative decoding (task.speculative_draft_tokens = {draft_tokens}, accept length "
            f"{accept_length:g}): {accept_length:g} tokens a verify step, each step 1 + {DRAFT_TOKEN_STEP_SHARE:g} x "
            f"{draft_tokens} longer for the draft (SGLang's MTP on DeepSeek-V3) = x "
            f"{speculative_factor(draft_tokens, accept_length):.2f} tokens a second; the compute cap counts the "
            f"{draft_tokens + 1} tokens each step verifies")
