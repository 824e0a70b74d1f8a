"""A custom transformer's parameter count from its shape, and the check that a mixture's MLP width is the width a
token reads (its shared expert's included), not one expert's from config.json."""

from __future__ import annotations

import math

import msgspec

from pth_top.configs.answer_types import Workload
from pth_top.configs.vision_encoder import VisionEncoder

# What a custom transformer's count is when none is given.
DERIVED_PARAMETERS_TEXT = (
    "counted from the shape: L x (attention 2 x h x d x (a + h_kv heads) + the MLP's 2, or 3 gated, x h x m, x "
    "experts / experts a token for a mixture, its shared expert once) + V x h for the embeddings, and again for an "
    "untied LM head, + a vision encoder's 12 x L_v x h_v^2 where workload.frozen_parameters does not hold it; norms "
    "and biases left out")


def derived_parameters(workload: Workload, active: bool = False) -> int:
    """A custom transformer's parameter count from its shape: attention with its key/value heads, the MLP at its
    width (gated: 3 matrices), a mixture's every expert (`active`: those a token reads, and one V x h), the
    embeddings and an untied LM head (12*L*h^2 + V*h, GPT-2's, counts Qwen2.5-7B as 4.86B of 7.62). A mixture's
    intermediate_size is the width a token reads, experts_per_token experts' (Mixtral: 2 x 14,336), as presets have."""
    hidden, heads = workload.hidden_size, workload.attention_heads or 1
    head_dim = workload.head_dim or hidden // heads
    kv_heads = workload.kv_heads or heads
    attention = hidden * head_dim * (2 * heads + 2 * kv_heads)
    matrices = 3 if workload.gated_mlp else 2
    mlp = matrices * hidden * (workload.intermediate_size or 4 * hidden)
    if workload.experts_count and workload.experts_per_token and not active:  # every routed expert, the shared once
        shared = matrices * hidden * workload.shared_expert_width
        mlp = (mlp - shared) * workload.experts_count // workload.experts_per_token + shared
    # An encoder-decoder's decoder layers (counted in L) also attend to the encoder: a second attention block.
    layer_weights = workload.layers * (attention + mlp) + workload.decoder_layers * attention
    # A token reads one row of the input embedding: the active count has the LM head's V x h once (as OpenAI counts).
    heads_out = 1 if workload.tied_embeddings or workload.encoder_only or active else 2
    # The vision tower's weights are the model's (audit DJ69: Qwen2.5-VL-72B's 0.63B counted for FLOPs alone), unless
    # a frozen one is answered in frozen_parameters, as vision_trained's doc says.
    vision = 0 if active or workload.frozen_parameters else \
        VisionEncoder(workload.vision_layers, workload.vision_hidden_size, 0, False).parameters
    return layer_weights + heads_out * workload.vocabulary_size * hidden + vision


# A mixture whose shape reads under this share of its given active count was given one expert's MLP width (audit
# AO44: GRIN-MoE's config.json 6,400, one of its 2 experts a token, read 3.99B of its 6.6B active, 0.60).
EXPERT_WIDTH_ACTIVE_SHARE_MIN = 0.75


def expert_width_problems(workload: Workload) -> list[tuple[str, str, str]]:
    """A custom mixture's intermediate_size is the width a token reads, experts_per_token experts' (as
    derived_parameters counts it): config.json's one expert's width undercounts it (audit XD6: PowerMoE-3B's 512 of
    40 x 8 made 654M parameters of a 3.3B model, 800M active)."""
    if workload.shared_expert_width and (not workload.experts_count or workload.shared_expert_width
                                         >= (workload.intermediate_size or 4 * workload.hidden_size)):
        return [("workload", "shared_expert_width", (
            "is a mixture's shared experts' width, a part of intermediate_size (the width a token reads: "
            "experts_per_token x one expert's + the shared one's), with experts_count given"))]
    if not (workload.experts_count and workload.intermediate_size and workload.hidden_size and workload.layers):
        return []
    total, active = derived_parameters(workload), derived_parameters(workload, active=True)
    named = workload.active_parameters
    if (workload.parameters or total) >= named and active >= EXPERT_WIDTH_ACTIVE_SHARE_MIN * named:
        return []
    # A hybrid's wider linear-attention projections and vision tower read beyond the shape: one expert's width
    # is flagged only where experts_per_token of it reads nearer the named count (audit CJ60: Qwen3.5-122B-A10B).
    width = workload.experts_per_token * workload.intermediate_size
    widened = msgspec.structs.replace(workload, intermediate_size=width + workload.shared_expert_width)
    shared = f" + the shared {workload.shared_expert_width:,}" if workload.shared_expert_width else ""
    if abs(math.log(derived_parameters(widened, active=True) / named)) >= abs(math.log(active / named)):
        return []
    return [("workload", "intermediate_size", (
        f"a mixture's MLP width is the width a token reads, experts_per_token x one expert's (config.json's "
        f"intermediate_size or moe_intermediate_size; Mixtral: 2 x 14,336 = 28,672) and a shared expert's "
        f"(workload.shared_expert_width): at {workload.intermediate_size:,} "
        f"this shape has {active / 1e6:,.0f}M active parameters, not the {named / 1e6:,.0f}M "
        f"given; if {workload.intermediate_size:,} is one expert's, give {workload.experts_per_token} x "
        f"{workload.intermediate_size:,}{shared} = {width + workload.shared_expert_width:,}"))]
