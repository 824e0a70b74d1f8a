"""A language model's loss logits: the estimate against the peak the `memory` kernel's CPU method measures."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pth_top.configs.answer_types import Workload
from pth_top.configs.memory import estimate_training, loss_logits_bytes
from pth_top.configs.memory_inference import estimate_inference
from pth_top.configs.memory_terms import ModelShape, transformer_activation_bytes
from pth_top.configs.presets import model_shape
from pth_top.units import GIB

TOLERANCE = 0.15
VOCABULARY, HIDDEN, HEADS, LAYERS, SEQUENCE, BATCH = 32000, 128, 4, 2, 128, 8


def test_a_large_vocabulary_lm_step_is_within_15_percent_of_the_measured_peak():
    torch = pytest.importorskip("torch")
    from torch import nn

    from pth_top.benches.child.kernels import memory

    class LanguageModel(nn.Module):
        """Embedding, GPT-2 blocks, LM head; the loss as HF causal LMs compute it (fp32 upcast, cross-entropy)."""

        def __init__(self) -> None:
            super().__init__()
            self.embedding = nn.Embedding(VOCABULARY, HIDDEN)
            self.blocks = memory.transformer(LAYERS, HIDDEN, HEADS)
            self.norm = nn.LayerNorm(HIDDEN)
            self.head = nn.Linear(HIDDEN, VOCABULARY, bias=False)

        def forward(self, tokens: torch.Tensor) -> torch.Tensor:
            logits = self.head(self.norm(self.blocks(self.embedding(tokens))))
            return nn.functional.cross_entropy(logits.float().view(-1, VOCABULARY), tokens.view(-1))

    def build():
        torch.manual_seed(0)
        return LanguageModel(), torch.randint(0, VOCABULARY, (BATCH, SEQUENCE))

    measured = memory.peak_bytes("cpu", build)
    model, _ = build()
    shape = ModelShape("transformer", sum(p.numel() for p in model.parameters()), layers=LAYERS, hidden_size=HIDDEN,
                       attention_heads=HEADS, sequence_length=SEQUENCE, vocabulary_size=VOCABULARY)
    estimate = estimate_training(shape, precision="fp32", optimizer="adamw", global_batch=BATCH,
                                 flash_attention=False, cuda_context_bytes=0)
    assert abs(estimate.total_bytes / measured - 1) <= TOLERANCE, (estimate.total_bytes / 2**20, measured / 2**20)
    assert loss_logits_bytes(shape, BATCH) > 0.5 * measured  # the logits are most of this peak


def test_llama3_8b_lora_at_8192_tokens_counts_its_fp32_logits():
    # Review finding 4: Llama 3 8B (V = 128,256) LoRA at 8192 tokens was sized without its logits.
    llama3 = model_shape(Workload(preset="llama3-8b"))[0]
    breakdown = estimate_training(llama3, precision="bf16", optimizer="adamw", global_batch=1, method="lora",
                                  recompute="full")
    assert loss_logits_bytes(llama3, 1) == 3 * 8192 * 128_256 * 4
    assert breakdown.activations_bytes > loss_logits_bytes(llama3, 1)
    assert breakdown.total_bytes > 24 * GIB  # not a 24 GB card
    assert any("loss logits" in line for line in breakdown.formula)


def test_models_without_a_vocabulary_keep_the_backward_working_set():
    vit = model_shape(Workload(preset="vit-b16"))[0]
    breakdown = estimate_training(vit, precision="bf16", optimizer="adamw", global_batch=64)
    assert loss_logits_bytes(vit, 64) == 0
    assert any("backward working set" in line for line in breakdown.formula)


def test_a_bert_classification_fine_tune_holds_no_vocabulary_logits():
    # FX1's logits term was added for every model with a vocabulary: BERT fine-tuned for classification has a
    # [CLS] head (2 classes), not a masked-LM head, so 3 x 512 x 32 x 30,522 x 4 B = 6 GB were counted in error.
    bert = model_shape(Workload(preset="bert-base"))[0]
    gpt2 = model_shape(Workload(preset="gpt2-small"))[0]
    assert not bert.lm_head and gpt2.lm_head and model_shape(Workload(preset="llama3-8b"))[0].lm_head
    assert loss_logits_bytes(bert, 32) == 0 and loss_logits_bytes(gpt2, 1) == 3 * 1024 * 50257 * 4
    breakdown = estimate_training(bert, precision="bf16", optimizer="adamw", global_batch=32)
    assert not any("logits" in line for line in breakdown.formula)
    assert breakdown.activations_bytes < 3 * 512 * 32 * 30522 * 4
    served = estimate_inference(bert, precision="bf16", batch=8)
    assert not any("logits" in line for line in served.formula)
    quantized = estimate_inference(bert, precision="int4", batch=1)
    assert any(f"+ embeddings {30522 * 768 / 1e6:,.1f}M params" in line for line in quantized.formula)


def test_an_encoder_decoders_logits_are_over_its_decoder_tokens_and_each_side_over_its_own():
    # Whisper large (openai/whisper-large-v3 config.json): 32 encoder layers over 1,500 audio frames, 32 decoder
    # layers over at most 448 label tokens, V 51,866. The loss's logits are the decoder's: 3 x 448 x b x V x 4 B.
    whisper = ModelShape("transformer", 1_543_490_560, layers=64, hidden_size=1280, attention_heads=20,
                         sequence_length=1500, intermediate_size=5120, vocabulary_size=51866, decoder_layers=32,
                         decoder_sequence_length=448)
    assert loss_logits_bytes(whisper, 32) == 3 * 448 * 32 * 51866 * 4
    flat = replace(whisper, decoder_layers=0, decoder_sequence_length=0)
    assert loss_logits_bytes(flat, 32) == 3 * 1500 * 32 * 51866 * 4
    # Checkpointed (2 values of h a layer's input): 32 layers at 1,500 tokens + 32 at 448, not 64 at 1,500.
    assert transformer_activation_bytes(whisper, 32, "full", True) == 2 * 32 * 1280 * 32 * (1500 + 448)
    # Without checkpointing each decoder layer also keeps the encoder's K and V (2 x 1,500 x h x 2 B a sample).
    kept = transformer_activation_bytes(whisper, 1, "none", True) - transformer_activation_bytes(
        replace(whisper, layers=32, decoder_layers=0), 1, "none", True)
    decoder = transformer_activation_bytes(replace(whisper, layers=32, sequence_length=448, decoder_layers=0), 1,
                                           "none", True)
    assert kept == decoder + 32 * 2 * 1500 * 1280 * 2
