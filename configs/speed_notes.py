"""The speed prediction's fixed notes: what a figure does not count, said where the build shows it."""

from __future__ import annotations

from pth_top.configs import speed as sp
from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.quantization import FORMATS, weight_format

# An edge build is timed for llama.cpp; NVIDIA's own runtimes on a Jetson decode about twice as fast (NVIDIA's
# "Jetson Orin Nano Developer Kit Gets a Super Boost" blog, MLC INT4 on the Orin Nano Super).
JETSON_RUNTIMES_NOTE = ("engine: llama.cpp's rate; NVIDIA's MLC decodes faster on a Jetson: the Orin Nano Super runs "
                        "Llama 3.2 3B INT4 at 43 tokens/s and SmolLM2-1.7B at 64.5 with MLC (NVIDIA's Super Boost "
                        "blog), where llama.cpp is timed here at about half")


def ollama_queue(batch: int, one_stream: float) -> str:
    """llama.cpp's batch of streams is llama-server's slots; Ollama, which runs llama.cpp, serves OLLAMA_NUM_PARALLEL
    requests a model at once, 1 by default (Ollama 0.20.3 unset: baeseokjae.github.io research/evidence/ollama-
    concurrent-requests-latency-2026), and queues the rest (audits ZF19 and ZN23: Gemma 3 1B and 270M for 16 users on
    an Orin Nano under Ollama, 88.1 and 158.1 tokens/s in all, NavyaAI)."""
    return (f"the {batch} streams decode together as llama-server --parallel {batch} runs them (-np, its -c "
            f"{batch} x the context); Ollama serves OLLAMA_NUM_PARALLEL requests at once, 1 by default, and queues the "
            f"rest: one at a time ~{one_stream:,.1f} tokens/s in all, each request waiting for those before it (set "
            f"OLLAMA_NUM_PARALLEL={batch} for the rate above)")


# Why a model given by its parameter count alone is not timed but over a table (configs.speed_build): audit ZV26,
# Tacotron 2 (28.2M, an LSTM decoder over ~800 mel frames a clip) timed at 2N FLOPs a clip, an epoch in 0.023 s
# against NVIDIA DeepLearningExamples' 20,992 mels/s on a V100 (~6 min an epoch); audit ZP34, StyleGAN3-T at 1024 px,
# 156.91 s per 1,000 images on an A100 (NVlabs/stylegan3 docs/configs.md), ~138,000 images/s at 2N.
GENERIC_NOT_PREDICTED = (
    "not predicted for a model given by its parameter count alone over anything but a table: a recurrent or "
    "convolutional model runs its weights once a time step or a pixel (Tacotron 2's LSTM decoder over ~800 mel frames "
    "a clip; StyleGAN3-T's ~51M at 1024 px, 6.4 images/s on an A100 where 2N an image gave ~138,000), a count the "
    "answers cannot state; give it as a transformer (its layers and widths) or a CNN (forward_gflops_per_sample)")


def work_a_sample_unknown(answers: Answers, shape: ModelShape) -> bool:
    """A model given by its parameter count alone over anything but a table, whose work a sample is not known (a table's
    MLP passes its weights once a row)."""
    return shape.kind == "generic" and answers.data.kind != "tabular"


# Why an encoder-decoder's inference speed is not predicted (configs.speed_build).
ENCODER_DECODER_NOT_PREDICTED = (
    "not predicted for an encoder-decoder's inference (Whisper): its time goes to audio features and beam search as "
    "much as to its matmuls (faster-whisper's large-v2 takes 54 s for 13 min of audio on a V100S, several times what "
    "its weight reads and matmuls take)")
# Why an audio encoder's rate is an upper bound (configs.speed_forward): NeMo's Parakeet-TDT-0.6B-v2 on an A100 at
# batch 128 (huggingface.co/nvidia/parakeet-tdt-0.6b-v2, open_asr_leaderboard.yaml); fast-gpu-asr on PyPI (TensorRT).
AUDIO_ENCODER_UPPER_BOUND = (
    "an audio encoder's rate counts its matmuls only, an upper bound: its front end (log-mel features, convolution "
    "subsampling) and a CTC or transducer decode are not in it; NeMo's Parakeet-TDT-0.6B-v2 runs 3,386x real time "
    "on an A100 at batch 128, about half what its matmuls allow (a TensorRT engine, fast-gpu-asr, reaches 6,482x)")
# An audio model's training at a share of a language model's utilisation: its convolutional front end or conv FFNs
# and short, padded utterances. Fitted on NVIDIA's FastPitch 1.1 (DeepLearningExamples, 1 x A100 80GB, AMP, batch 32 x
# 8: 101,730 mel frames/s, 0.18 of the count at 0.55); its 8-GPU row (623,498) comes out +31 %, and the wav2vec 2.0
# Base fine-tune's 41,276 tokens/s (audit SS: 6.4x at 0.55) about +15 %.
AUDIO_TRAINING_SHARE = 0.18
AUDIO_TRAINING_NOTE = (
    "an audio encoder trains at 0.18 of a language model's utilisation here (its convolutional front end and short, "
    "padded utterances): fitted on NVIDIA's FastPitch 1.1 on an A100 80GB (101,730 mel frames/s); wav2vec 2.0 "
    "Base's fine-tune (41,276 tokens/s) comes out ~15 % high; a transformer with a decoder over text or audio codes "
    "(Whisper, Speech-Transformer, Parler-TTS) at 0.4")
# The geometric mean of what the Whisper event's A100 rows and SpeechBrain's Transformer need (0.34-0.46: the
# whisper-event and speechbrain rows of published_speeds), 47-62 % slow at 0.18 (audits AW47, AY48, reviewer r70).
AUDIO_DECODER_TRAINING_SHARE = 0.4
AUDIO_DECODER_TRAINING_NOTE = (
    "a transformer over audio with a decoder (over text: Whisper, Speech-Transformer; over audio codes: Parler-TTS) "
    "trains at 0.4 of a language model's utilisation here (short, padded utterances): fitted on the Whisper event's "
    "A100 rows and SpeechBrain's Transformer on 4 x V100 (0.34-0.46); an encoder alone over frames (wav2vec 2.0, "
    "FastPitch, a CTC Conformer) at 0.18")


def audio_training_share(shape: ModelShape) -> tuple[float, str]:
    """The share of a language model's utilisation an audio transformer trains at, and the note that says so: with a
    decoder (an encoder-decoder, or a decoder over a vocabulary of codes), or an encoder alone."""
    decoder = shape.encoder_decoder or (shape.vocabulary_size > 0 and not shape.encoder_only)
    return (AUDIO_DECODER_TRAINING_SHARE, AUDIO_DECODER_TRAINING_NOTE) if decoder else \
        (AUDIO_TRAINING_SHARE, AUDIO_TRAINING_NOTE)

# A speech recogniser (an audio encoder-decoder: attention and CTC) trains at no more than ~40 utterances a second a GPU
# whatever the card: ESPnet's LibriSpeech recipes (egs2/librispeech/asr1/conf/tuning: 843,723 utterances of ~12.3 s an
# epoch with speed perturbation) take 40 min an epoch on 8 x A100 40GB (E-Branchformer, 43.9 a GPU), 100 on 4 x RTX
# A6000 (Branchformer, 35.2) and ~101 on 4 x V100 32GB (Conformer, 34.9: +15 %). What bounds a sample outside
# the counted matmuls (the STFT front end, SpecAugment, CTC, loading) is not modelled; the bound is the A100 and A6000
# rows' geometric mean (audit AQ45: the A100's epoch came out 2.6x). Whisper's fine-tunes stay under it (the community
# event's whisper-small on an A100, 27.8 samples/s; medium 11); a CTC-only encoder is not bounded here.
ASR_UTTERANCES_PER_S_PER_GPU = 40


# The engines that run a mixture's experts as fused kernels, not generate()'s Python loop over them.
FUSED_EXPERTS_ENGINES = ("an engine with fused expert kernels and CUDA graphs (vLLM, SGLang, llama.cpp: "
                         "task.serving_engine)")


def loop_is_most(loop_share: float) -> bool:
    """Whether generate()'s loop over the experts, `loop_share` of each decode step, is most of it."""
    return loop_share > 0.5


def slow_decode(per_stream: float, device: sp.Device, engine: str, precision: str, loop_share: float,
                heads: int = 0) -> str:
    """A decode under SLOW_DECODE_TOKENS_PER_S and its remedy: another engine where generate()'s Python loop over the
    experts (`loop_share` of a step) or its one GPU at a time holds it back (audit ZA: BLOOM-176B on 8 x A100), else a
    card with more bandwidth or smaller weights (tensor parallel only where the GPUs divide the `heads`)."""
    if loop_is_most(loop_share):
        remedy = f"{FUSED_EXPERTS_ENGINES} decodes many times faster: generate() loops over the experts in Python"
    elif engine == "hf_generate" and device.count > 1 and stacks.splits_heads("vllm", heads, device.count):
        remedy = (f"vLLM or SGLang (task.serving_engine) split each layer over the {device.count} GPUs and read them "
                  "together (tensor parallel), where generate() runs them one at a time: several times faster")
    else:
        remedy = "a card with more memory bandwidth" + ("" if precision == "int4" else ", or smaller weights (int4),") \
            + " decodes faster"
    return (f"slow: ~{per_stream:.1f} tokens/s per stream on {device.name} is under {sp.SLOW_DECODE_TOKENS_PER_S:g} "
            f"tokens/s, slower than reading; {remedy}")


def grouped_experts_assumed(looped_tokens_per_s: float) -> str:
    """A mixture under generate() timed with grouped GEMMs (task.experts_loop false), and its rate under the Python
    loop over the experts that transformers 4.x and a model's remote code run (audit DP71: Yuan2.0-M32's GroupedMLP
    loops over its 32 experts; 9.24 tokens/s published, 68.7 predicted as grouped GEMMs)."""
    return ("timed with the experts as grouped GEMMs (transformers 5's grouped_mm, task.experts_loop = false); "
            "transformers 4.x (task.transformers_version) and a model's remote code (trust_remote_code) loop over "
            f"them in Python, a host sync each: ~{sp.rate_text(looped_tokens_per_s)} tokens/s per stream with that "
            "loop (task.experts_loop = true)")


def expert_loop_share(looped_s: float, steps_per_s: float, loop_text: str, hit_only: bool) -> str:
    """generate()'s Python loop over a mixture's experts (speed_moe.decode_expert_loop's `loop_text`) as the most of a
    decode step, and the remedy (audit ZX27: Qwen1.5-MoE-A2.7B under transformers 4.x on an A100, ~12 s for a
    1,500-token prompt and 40 tokens, QwenLM/Qwen3#453; vLLM ran it 1.75x faster there)."""
    fitted = "fitted on DeepSeek's remote code" if hit_only else \
        "fitted on transformers 4.51.3, and up to ~2x that on other 4.x releases"
    return (f"generate() loops over the experts in Python: {loop_text} = {sp.duration(looped_s)} of each step's "
            f"~{sp.duration(1 / steps_per_s)} ({looped_s * steps_per_s:.0%}; {fitted}); {FUSED_EXPERTS_ENGINES}, or "
            "transformers 5's grouped GEMMs where its own modeling code runs the model (task.experts_loop = false), "
            "decodes many times faster on the same card")


FP8_BLOCK = 128  # DeepSeek-V3's, Qwen3's and MiniMax's FP8 releases scale their weights in 128 x 128 blocks
FP8_BLOCKS_NOTE = "if the FP8 checkpoint is block-scaled"  # fp8_expert_blocks' warning starts so
# A way out's line for the same (audit CK61: Step-3.5-Flash in FP8 over 4 GPUs offered with no caveat, its recipe: FP8
# "cannot use TP4").
EXPERT_PARALLEL_FLAGS = {"vllm": "vLLM --enable-expert-parallel", "sglang": "SGLang --ep-size {n}"}
FP8_SPLIT_WAY_OUT = ("a block-scaled FP8 checkpoint does not split its experts' width over these GPUs: serve it with "
                     f"expert parallel ({', '.join(flag.format(n='N') for flag in EXPERT_PARALLEL_FLAGS.values())}), "
                     "as its build says")


def fp8_expert_blocks(answers: Answers, shape: ModelShape, device: sp.Device, engine: str) -> list[str]:
    """Tensor parallel over n GPUs splits each expert's width n ways, which a block-scaled FP8 checkpoint needs in
    whole 128-wide blocks (audit YH2: MiniMax-M2.5's 1,536 / 8 = 192; vLLM's recipe says 'TP8 is not supported')."""
    task, n, width = answers.task, device.count, shape.expert_width
    fmt = weight_format(task.quantization, task.precision, engine)
    # A custom model's width not given is the default 4h, a guess (audit BM53: Step3's "9,557.33 / 8" refused a split
    # its vendor's guide runs): said only of a width given.
    guessed = answers.workload.preset == "custom" and not answers.workload.intermediate_size
    if guessed or n < 2 or device.layer_split or engine not in stacks.TENSOR_PARALLEL_ENGINES \
            or not shape.experts_count or fmt is not FORMATS["fp8"] or not width or (width / n) % FP8_BLOCK == 0:
        return []
    fewer = max((count for count in range(1, n) if (width / count) % FP8_BLOCK == 0
                 and stacks.splits_heads(engine, shape.attention_heads, count, shape.split_kv_heads)), default=1)
    # A per-tensor FP8 checkpoint (Hunyuan-Large's W8A8C8, served TP8 on 8 H20s by Tencent) splits at any width.
    over_fewer = f", or tensor parallel over {fewer} GPUs" if fewer > 1 else ""
    return [f"{FP8_BLOCKS_NOTE} (DeepSeek-V3's, Qwen3's, MiniMax's {FP8_BLOCK} x {FP8_BLOCK} "
            f"scales): tensor parallel over {n} GPUs splits each expert's width, {width:,g} / {n} = "
            f"{width / n:g}, not a whole number of its {FP8_BLOCK}-wide blocks, and the engine refuses it (vLLM's "
            f"MiniMax-M2 recipe: 'TP8 is not supported'); serve it with expert parallel "
            f"({EXPERT_PARALLEL_FLAGS[engine].format(n=n)}, each GPU holding whole experts; the rate above is of the "
            f"same reads)"
            f"{over_fewer}. A per-tensor FP8 checkpoint splits at any width"]
