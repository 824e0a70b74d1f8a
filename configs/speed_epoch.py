"""How much work one epoch is: the data set's tokens or images, counted (data.tokens_count, data.images_count) or
read from its size in GB, and the seconds it takes at a training rate."""

from __future__ import annotations

from pth_top.configs import speed as sp
from pth_top.configs.answers import Answers
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.presets import counted_denoiser


def epoch_seconds(answers: Answers, shape: ModelShape, rate: float) -> tuple[float, str, bool]:
    """One pass over the data set where its size says how much work it is (text tokens, images), how many samples
    it was read as, and whether they were counted (data.tokens_count, data.images_count), not read from its GB;
    (0, "", False) otherwise."""
    data = answers.data
    size = data.dataset_size_gb * 1e9
    if shape.encoder_decoder:  # timed in samples: a counted text corpus is samples of s input tokens (T5's), no more
        if data.kind in ("video", "audio") and data.images_count:  # audit AQ45: ESPnet's utterances were not read
            return data.images_count / rate, f"{data.images_count:,} clips (data.images_count)", True
        if data.kind == "text" and data.tokens_count and shape.sequence_length:
            samples = data.tokens_count / shape.sequence_length
            return samples / rate, (f"{_tokens_text(data.tokens_count)} tokens (data.tokens_count) as {samples:,.0f} "
                                    f"samples of {shape.sequence_length:,} input tokens"), True
        return 0.0, "", False
    if shape.kind == "transformer" and data.tokens_count and data.kind != "images":  # text tokens, audio frames
        return data.tokens_count / rate, f"{_tokens_text(data.tokens_count)} tokens (data.tokens_count)", True
    if data.kind == "text" and shape.kind == "transformer" and size:
        tokens = size / sp.BYTES_PER_TEXT_TOKEN
        return tokens / rate, f"~{_tokens_text(tokens)} tokens at ~{sp.BYTES_PER_TEXT_TOKEN:g} bytes each", False
    # A transformer's rate counts its tokens, a CNN's or a denoiser timed from its counted FLOPs its samples.
    per_sample = shape.sequence_length if shape.kind == "transformer" and not counted_denoiser(answers, shape) else 1
    # A clip a sample (audit XN9: TSM's epoch said 1M samples; audit YE15: QuartzNet's utterances were not read).
    if data.kind in ("video", "audio") and data.images_count:
        return data.images_count * per_sample / rate, f"{data.images_count:,} clips (data.images_count)", True
    if data.kind == "images" and (data.images_count or size):
        if data.images_count:
            return data.images_count * per_sample / rate, f"{data.images_count:,} images (data.images_count)", True
        images = size / sp.BYTES_PER_IMAGE
        return images * per_sample / rate, (f"~{images / 1e6:,.3g}M images at ImageNet's "
                                            f"~{sp.BYTES_PER_IMAGE / 1e3:g} KB each"), False
    return 0.0, "", False


def _tokens_text(count: float) -> str:
    """A token count in billions, or trillions from 1e12 (SmolLM3's 11.2T, not 1.12e+04B)."""
    return f"{count / 1e12:,.3g}T" if count >= 1e12 else f"{count / 1e9:,.3g}B"
