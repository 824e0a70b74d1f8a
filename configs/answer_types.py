"""The wizard's answers as typed structs: one Struct per section (data, scale and budget in answer_sections), limits
and help in Meta, choices as Literal.

An answers file (and a build file's [answers]) is validated against AnswersFile; the wizard's form reads
each field's limits, choices and help from the same structs (configs.answers.FIELDS).
"""

from typing import Annotated, Literal, get_args

from msgspec import Meta, field

from pth_top.configs.answer_sections import (
    MAX_GPUS,
    MAX_TEXT_CHARS,
    Budget,
    Data,
    Scale,
    whole,
)
from pth_top.configs.memory_methods import FrozenPrecision, LoraTargets, TrainingMethod
from pth_top.configs.memory_terms import (
    InferencePrecision,
    MixedLayout,
    Optimizer,
    RecomputeMode,
    TrainingPrecision,
)
from pth_top.configs.quantization import Quantization
from pth_top.configs.schema import RELEASE_PATTERN, Schema
from pth_top.configs.stacks import ForwardRuntime, KvCacheDtype, OptimizerKernel, ServingEngine, TrainingStack

Scenario = Literal["personal_research", "team_training", "edge_deployment", "inference_server"]
ModelKind = Literal["transformer", "cnn", "generic"]
DenseHead = Literal["auto", "detection", "instance", "query", "segmentation", "realtime_segmentation", "dense"]
TaskMode = Literal["training", "inference"]
Precision = Literal[TrainingPrecision, InferencePrecision]
SCENARIOS: tuple[str, ...] = get_args(Scenario)
MODEL_KINDS: tuple[str, ...] = get_args(ModelKind)
TASK_MODES: tuple[str, ...] = get_args(TaskMode)


class Workload(Schema, frozen=True):
    preset: Annotated[
        str, Meta(max_length=MAX_TEXT_CHARS, pattern=r"\S", description="a model preset id, or 'custom'")
    ] = "gpt2-small"
    kind: Annotated[ModelKind, Meta(description="custom models only")] = "transformer"
    parameters: Annotated[int, whole(0, 2_000_000_000_000, "parameter count (0: derive from the architecture)")] = 0
    layers: Annotated[int, whole(0, 1024, (
        "transformer layers (an encoder-decoder's both stacks together: Whisper large 32 + 32 = 64, of which "
        "decoder_layers); a custom CNN's weight layers (ResNet-50: 50; 0: 50), for its kernels (eager launches, "
        "a compiled engine's fused layers) and a classifier's, detector's or segmentation net's ResNet depth "
        "(ResNet-101: 101; 18 and 34: basic blocks, fewer values a pixel)"))] = 0
    hidden_size: Annotated[int, whole(0, 131072, "transformer hidden size h")] = 0
    attention_heads: Annotated[int, whole(0, 1024, "attention heads a")] = 0
    kv_heads: Annotated[int, whole(0, 1024, "key/value heads (grouped-query attention); 0 = a")] = 0
    head_dim: Annotated[int, whole(0, 65536, "per-head width when not h / a (Gemma 3 27B: 128); 0 = h / a")] = 0
    kv_latent_width: Annotated[int, whole(0, 65536, (
        "multi-head latent attention (MLA: DeepSeek-V3/R1, Kimi K2, GLM-4.7-Flash): values cached a token a layer for "
        "all heads, config.json's kv_lora_rank + qk_rope_head_dim (512 + 64 = 576), kept whole on every GPU under "
        "tensor parallel; 0: K and V for each KV head"))] = 0
    sliding_window_tokens: Annotated[int, whole(0, 2_000_000, (
        "sliding-window attention: tokens a window layer attends to (Gemma 3: 1024); 0 = none"))] = 0
    sliding_window_layers: Annotated[int, whole(0, 1024, "layers with the sliding window (Gemma 3 27B: 52 of 62)")] = 0
    linear_attention_layers: Annotated[int, whole(0, 1024, (
        "hybrid models: layers of linear attention or a state-space block (Gated DeltaNet, Mamba), a fixed state a "
        "sequence and no KV cache (Qwen3-Next-80B-A3B: 36 of 48, config.json full_attention_interval 4); all of them "
        "for a pure state-space model (Falcon Mamba 7B: 64 of 64)"))] = 0
    parallel_ssm_layers: Annotated[int, whole(0, 1024, (
        "parallel hybrids: layers whose attention runs beside a state-space block (Falcon-H1: all 44 of 44; Hymba), "
        "each with its KV cache and a Mamba's fixed state a sequence in inference (in training the block's activations "
        "are not counted)"))] = 0
    ssm_inner_width: Annotated[int, whole(0, 1_000_000, (
        "a Mamba block's inner width, config.json's mamba_d_ssm or d_inner (Falcon-H1-7B: 3,072); 0: 2h, Mamba-2's "
        "expand of 2"))] = 0
    ssm_state_size: Annotated[int, whole(0, 4096, (
        "a Mamba layer's state a channel, config.json's state_size or mamba_d_state (Mamba-1, Falcon Mamba: 16; "
        "Mamba-2: 128; Falcon-H1: 256), its state inner width x state_size values a sequence; 0: 128, as Mamba-2 and "
        "Gated DeltaNet keep"))] = 0
    denoising_steps: Annotated[int, whole(0, 1000, (
        "a diffusion transformer's sampling steps per image (FLUX.1-dev 28, schnell 4; inference); 0 = not one"))] = 0
    classifier_free_guidance: Annotated[bool, Meta(description=(
        "each denoising step runs the model twice, as SD3.5 does (FLUX.1-dev is guidance-distilled: false)"))] = False
    single_stream_dit: Annotated[bool, Meta(description=(
        "a diffusion transformer whose every block runs every token through every weight (DiT, PixArt, Sana, Wan, "
        "Open-Sora, Allegro; HunyuanVideo too, as its published rows here are timed), timed at ~1.7x less of the "
        "tensor rate than an MMDiT's dual-stream blocks (FLUX.1, SD3; false), whose text and image tokens pass their "
        "own halves"))] = False
    unet: Annotated[bool, Meta(description=(
        "a diffusion model's denoiser is a UNet (SD 1.5, SDXL, SSD-1B, Kolors): without a counted "
        "forward_gflops_per_sample its FLOPs a pass are estimated from its parameters and output_width_px x "
        "output_height_px, not as 2N a latent token (a diffusion transformer's, several times a UNet's)"))] = False
    output_width_px: Annotated[int, whole(0, 16384, (
        "a diffusion model's output width in pixels, which sizes its VAE decode; in training, the validation images "
        "its trainer samples between steps (SimpleTuner's validation_resolution, ai-toolkit's sample width, diffusers' "
        "--validation_prompt at --resolution) (0: the decode not counted)"))] = 0
    output_height_px: Annotated[int, whole(0, 16384, "a diffusion model's output height in pixels")] = 0
    decoded_frames_at_once: Annotated[int, whole(1, 10_000, (
        "output frames the VAE decodes at once, not the clip's: 1 for an image; a video pipeline's decode "
        "micro-batch (Open-Sora and Wan2.1's causal VAE, one latent frame at a time: 4; CogVideoX: 8, two latent "
        "frames); a 2D VAE that decodes a clip's frames as one batch (zeroscope, ModelScope T2V): the clip's frames, "
        "1 with task.vae_slicing"))] = 1
    sequence_length: Annotated[
        int, whole(0, 2_000_000, (
            "tokens per sample s (a preset: 0 = its context, else at most it); in inference the prompt, "
            "task.generated_tokens added on top in the KV cache (an engine's max_model_len is both)"))
    ] = 0
    decoder_layers: Annotated[int, whole(0, 1024, (
        "an encoder-decoder (Whisper, T5): the layers of L over the decoder's tokens; 0 = none"))] = 0
    decoder_sequence_length: Annotated[int, whole(0, 2_000_000, (
        "an encoder-decoder: the decoder's tokens per sample, which the loss's logits are over, or that generation "
        "caches (Whisper: at most 448, where s is its 1,500 audio frames)"))] = 0
    vocabulary_size: Annotated[int, whole(0, 10_000_000, "vocabulary size V")] = 0
    input_size_px: Annotated[int, whole(0, 8192, (
        "CNN input side in pixels, the square root of width x height for a rectangle (0 for a preset: its own size); "
        "for inference the size images are run at, not a training crop (mmseg's ADE20K nets train on 512 x 512 crops "
        "and are timed at 2048 x 512 scaled to ~683 x 512)"))] = 0
    weights_file_gb: Annotated[float, Meta(ge=0, le=100_000, description=(
        "a quantized model's weight files as published, in GB (a GGUF's size on Hugging Face, all its parts): its "
        "weights are counted at that size instead of the format's bits a weight, which under 4 bits differ by model "
        "and quantizer (llama.cpp's Q2_K: 3.16 bits on Llama 3.1 8B, 3.26 on MiMo-V2.6's 126 GB file; 0: from the "
        "format)"))] = 0.0
    frames_per_sample: Annotated[int, whole(1, 4096, (
        "a video CNN's frames in one sample, a clip (TSN, TSM: 8 or 16): each frame keeps its own activations; "
        "forward_gflops_per_sample is then the clip's; a two-pathway net counts its narrow pathway's frames at their "
        "width (SlowFast R50 4x16: 4 slow + 32 fast at 1/8 the channels = 8; 8x8: 12)"))] = 1
    dense_head: Annotated[DenseHead, Meta(description=(
        "a custom CNN's head where activation_elements_per_sample is not given: detection (a detector on a ResNet "
        "as mmdet, detectron2 and torchvision train it, Faster or Mask R-CNN, RetinaNet, YOLOF, Panoptic FPN, SOLOv2: "
        "ResNet-50's values a pixel; given its FLOPs, their square root x 0.56, its stem and first stage frozen; a "
        "YOLO trains every layer: dense), dense (a YOLO or a U-Net, every layer trained: the square root of its "
        "FLOPs against ResNet-50's, forward_gflops_per_sample), "
        "instance (a one-stage instance segmenter whose mask branch writes a mask a grid cell at 1/4 scale: SOLO, "
        "decoupled SOLO: 2.1x), query (a DETR-family transformer head over the backbone's maps: Deformable DETR, "
        "DINO, Mask2Former, Mask DINO: 2.1x a detector's), segmentation (a dilated or pyramid head: UPerNet, OCRNet, "
        "DeepLabV3+: 3.5x; an FPN semantic head, Semantic FPN or PointRend, keeps a detector's: detection), "
        "realtime_segmentation (a real-time segmenter, STDC, BiSeNet, DDRNet, PIDNet, Fast-SCNN: 1.25x), or "
        "auto: a classifier's under 512 px (its depth past ResNet-50's 50 layers and the 0.3 power of its FLOPs), "
        "segmentation's at 512 px or more without forward_gflops_per_sample, dense's with it"))] = "auto"
    activation_elements_per_sample: Annotated[int, whole(0, 1_000_000_000_000, (
        "CNN values saved for backward per sample, ~2x timm's infer_macts for a ResNet (ResNet-50: 21.5M, timm's "
        "11.1M), ~4-5x for a DenseNet (its concatenations: DenseNet-121 ~30M, timm's 6.9M); its "
        "memory and its activations' time through memory (0: scaled from ResNet-50's per pixel, by the square root "
        "of the FLOPs ratio where forward_gflops_per_sample is given, never below ResNet-50's density in memory)"))] = 0
    forward_gflops_per_sample: Annotated[float, Meta(ge=0, le=1_000_000, description=(
        "a custom CNN's forward GFLOPs per input, as its model card gives them (YOLOv8s: 28.6 at 640 px), 2 x its "
        "multiply-adds: fvcore, thop and ptflops print multiply-adds as 'FLOPs' (DETR's 86 are 172), so double "
        "theirs; 0: "
        "scaled from ResNet-50 by saved activations; a preset keeps its published count. A diffusion model's: its "
        "denoiser's GFLOPs for one pass over one image (SDXL UNet at 1024 px: 6,761, counted)"))] = 0.0
    batch_size: Annotated[int, whole(1, 1_000_000, "global batch per optimizer step")] = 8
    intermediate_size: Annotated[int, whole(0, 1_048_576, (
        "transformer MLP width (0: 4h); a mixture's: the width a token reads, experts_per_token x one expert's and "
        "a shared expert's, shared_expert_width (Mixtral: 2 x 14,336; DeepSeek-V3: 8 x 2,048 + 2,048)"))] = 0
    gated_mlp: Annotated[bool, Meta(description="SwiGLU MLP (gate, up, down), as in Llama and Mistral")] = False
    encoder_only: Annotated[bool, Meta(description=(
        "an encoder (BERT, XLM-RoBERTa, bge-m3, ViT): attends both ways, no vocabulary logits, generates nothing: "
        "inference is one forward pass per input, with no KV cache"))] = False
    tied_embeddings: Annotated[bool, Meta(description=(
        "the LM head is the embedding matrix (config.json tie_word_embeddings: Gemma, Command-R, Llama 3.2 1B/3B): "
        "one V x h tensor, kept at its own bits by quantizers, not two"))] = False
    lookup_parameters: Annotated[int, whole(0, 2_000_000_000_000, (
        "of parameters, embedding tables a decode step looks up a row of a token, not reads whole: Gemma 3n's and "
        "Gemma 4's per-layer embeddings (E4B: 262,144 x 256 x 42 = 2.8B of its 8B); held in memory, not streamed "
        "(0: none beyond the input embedding, which is never counted as read)"))] = 0
    active_parameters: Annotated[int, whole(0, 2_000_000_000_000, (
        "mixture of experts: parameters used per token (0: dense); memory still holds every expert"))] = 0
    experts_count: Annotated[int, whole(0, 4096, (
        "mixture of experts: routed experts a layer (config.json n_routed_experts / num_experts; GLM-4.5-Air: 128); "
        "with experts_per_token they size what llama.cpp --cpu-moe keeps in RAM"))] = 0
    experts_per_token: Annotated[int, whole(0, 4096, (
        "mixture of experts: routed experts a token reads (num_experts_per_tok; GLM-4.5-Air: 8)"))] = 0
    shared_expert_width: Annotated[int, whole(0, 1_048_576, (
        "mixture of experts: the MLP width of the shared experts every token also reads, counted in intermediate_size "
        "(config.json's shared_expert_intermediate_size, or n_shared_experts x moe_intermediate_size: DeepSeek-V3 "
        "2,048); it splits over tensor parallel as a dense MLP, not as an expert; 0: none"))] = 0
    vision_layers: Annotated[int, whole(0, 1024, (
        "a vision-language model's vision encoder (a ViT): its layers (SigLIP-so400m 27, Qwen2.5-VL's 32); 0 = none "
        "(the image tokens then only in sequence_length)"))] = 0
    vision_hidden_size: Annotated[int, whole(0, 65536, (
        "the vision encoder's width (SigLIP-so400m 1,152, Qwen2.5-VL's 1,280)"))] = 0
    vision_tokens: Annotated[int, whole(0, 100_000_000, (
        "patches the vision encoder runs a sample, every image and crop: SmolVLM's 17 crops x 729; Qwen2.5-VL at "
        "1,036 x 1,036 px 74 x 74 = 5,476, which its 2x2 merge sends to the language model as 1,369 of "
        "sequence_length"))] = 0
    vision_trained: Annotated[bool, Meta(description=(
        "the vision encoder trains: in full (MiniCPM-V's tune_vision, its default) or with adapters on its layers "
        "(PEFT target_modules that match its q_proj/v_proj); its weights then in parameters. false: frozen, a forward "
        "only (LLaMA-Factory's freeze_vision_tower, its default), its weights in frozen_parameters"))] = False
    vision_checkpointed: Annotated[bool, Meta(description=(
        "a trained vision encoder's layers are recomputed with the language model's (task.recompute; transformers' "
        "gradient_checkpointing_enable reaches SigLIP and Idefics3's encoder); false: the trainer keeps their "
        "activations (Phi-3-vision's cookbook: 36 GB a GPU with its CLIP tower trained, 27 frozen)"))] = True
    frozen_parameters: Annotated[int, whole(0, 2_000_000_000_000, (
        "frozen models also kept on each GPU, e.g. a diffusion model's text encoders and VAE, or a VLM's vision "
        "encoder (split with the model under vLLM or SGLang tensor parallel) (0: none)"))] = 0
    frozen_largest_parameters: Annotated[int, whole(0, 2_000_000_000_000, (
        "of frozen_parameters, the largest one model: model offload (task.pipeline_offload) moves the frozen models "
        "to the GPU one at a time (HiDream-I1's Llama-3.1-8B of its four text encoders); 0: they move as one"))] = 0
    frozen_precision: Annotated[FrozenPrecision, Meta(description=(
        "the frozen models' weights: bf16, fp16, fp32, int8 (8-bit, as ai-toolkit's quantize_te) or int4 "
        "(bitsandbytes nf4); a VLM's vision tower under generate() takes bitsandbytes' weights format"))] = "bf16"


class Task(Schema, frozen=True):
    mode: TaskMode = "training"
    precision: Precision = "bf16"
    tf32: Annotated[bool, Meta(description=(
        "fp32 matmuls on TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32, set_float32_matmul_precision("
        "'high'), HF Trainer --tf32, NVIDIA's PyTorch containers): timed at the TF32 tensor rate, the values and "
        "memory fp32's; false: PyTorch's default since 1.12, matmuls on the FP32 cores (convolutions are TF32 by "
        "default either way)"))] = False
    optimizer: Optimizer = "adamw"
    optimizer_in_backward: Annotated[bool, Meta(description=(
        "a full fine-tune steps each parameter as backward reaches it and frees its gradient (torchtune's "
        "optimizer_in_bwd, Forgather's fuse_optim_with_backward, PyTorch's register_post_accumulate_grad_hook): no "
        "whole gradient held, one GPU and no gradient accumulation"))] = False
    optimizer_kernel: Annotated[OptimizerKernel, Meta(description=(
        "how torch.optim steps: foreach, its CUDA default, holds an intermediate the size of the trained parameters "
        "at the step's peak (after backward has freed the activations); fused (HF Trainer's adamw_torch_fused, its "
        "default from torch 2.8; torchtune's fused=True; DeepSpeed's FusedAdam) holds none; auto: fused for text "
        "models and under DeepSpeed, foreach for image, video and audio trainers (diffusers' examples, timm, "
        "mmengine)"))] = "auto"
    recompute: Annotated[RecomputeMode, Meta(description="gradient checkpointing")] = "none"
    flash_attention: Annotated[bool, Meta(description=(
        "FlashAttention / SDPA: no s x s scores held (Korthikanti's 5as/h) or moved through memory; false: eager "
        "attention, slower and larger at long sequences"))] = True
    accumulation_steps: Annotated[int, whole(1, 65536, "gradient accumulation steps")] = 1
    generated_tokens: Annotated[int, whole(0, 2_000_000, "tokens generated per request (KV cache)")] = 256
    speculative_draft_tokens: Annotated[int, whole(0, 16, (
        "inference with speculative decoding (EAGLE, a model's MTP heads): tokens the draft proposes a step, SGLang's "
        "--speculative-num-steps with topk 1, vLLM's num_speculative_tokens; 0: none"))] = 0
    speculative_accept_length: Annotated[float, Meta(ge=0.0, le=17.0, description=(
        "with speculative_draft_tokens: tokens a verify step keeps on average, its own included, as the engine logs "
        "it (SGLang's accept len, vLLM's mean acceptance length): DeepSeek-V3's MTP 2.2-2.4 with 2-3 drafted, "
        "MiMo-V2-Flash's 3.6 with 3"))] = 0.0
    engine_memory_fraction: Annotated[float, Meta(ge=0.0, le=0.98, description=(
        "vLLM's --gpu-memory-utilization: the share of each GPU it plans for, its CUDA context, weights, activations "
        "and KV cache (0: its default, 0.9); 0.95 on a card that drives no display"))] = 0.0
    mixed_layout: Annotated[MixedLayout, Meta(description="bytes/param accounting")] = "megatron16"
    method: Annotated[
        TrainingMethod, Meta(description=(
            "full, LoRA (bf16 or int8 base), QLoRA (4-bit base), frozen backbone (a head on its output, forward "
            "only) or projector (a trained part at a frozen transformer's input, its backward through every layer: "
            "MiniGPT-4's projection, LLaVA's stage-1 projector, prompt tuning)"))
    ] = "full"
    lora_rank: Annotated[int, whole(1, 65536, "LoRA rank r")] = 16
    lora_targets: Annotated[LoraTargets, Meta(description="attention: q,k,v,o; all_linear adds the MLP")] = "attention"
    lora_dropout: Annotated[float, Meta(ge=0, le=0.9, description=(
        "LoRA dropout (PEFT's lora_dropout, default 0; LitGPT and many recipes 0.05): above 0 each adapted matrix "
        "keeps its dropped input and mask"))] = 0.0
    lora_base_fp32: Annotated[bool, Meta(description=(
        "LoRA's frozen base held in fp32 under mixed precision, its matmuls cast to 16 bits by autocast as they run "
        "(from_pretrained without torch_dtype under the HF Trainer's fp16=True: MusicGen's dreamboothing, ms-swift): "
        "4 B a base parameter, not 2"))] = False
    lora_trains_embeddings: Annotated[bool, Meta(description=(
        "the input embeddings and LM head trained whole beside the adapters (PEFT's modules_to_save = "
        "[\"embed_tokens\", \"lm_head\"]: a vocabulary extended, as Chinese-LLaMA-Alpaca-2's run_sft.sh, or "
        "Unsloth's continued pretraining): a trained copy of each beside the frozen original"))] = False
    preference_pairs: Annotated[bool, Meta(description=(
        "a preference trainer's samples are pairs (DPO, ORPO, SimPO; TRL runs a pair's chosen and rejected in one "
        "forward): workload.batch_size counts sequences, two a pair, and a micro-batch holds whole pairs, 2 at least"
        ))] = False
    contrastive_texts: Annotated[int, whole(0, 64, (
        "a contrastive trainer's texts a sample, each run as its own sequence: a query and its positive 2, with a hard "
        "negative 3 (LLM2Vec's E5 data, sentence-transformers' triplets), a query and 7 passages 8 (FlagEmbedding's "
        "train_group_size 7): workload.batch_size counts the texts (64 samples of 3 a GPU: 192), and a micro-batch "
        "holds whole samples; 0: one text a sample"))] = 0
    reference_without_adapters: Annotated[bool, Meta(description=(
        "a preference trainer's reference model is the base with its LoRA adapters switched off (TRL's DPOTrainer "
        "given a peft_config and no ref_model): its forward runs over the same tokens each step, with no second copy "
        "of the weights (a separate reference: workload.frozen_parameters); batch_size counts sequences, a pair's "
        "chosen and rejected two"))] = False
    head_parameters: Annotated[
        int, whole(0, 1_000_000_000_000, (
            "the trained head's or projector's parameters beside a frozen model (0: a head of width x 1000 classes; a "
            "projector of one h x h linear)"))
    ] = 0
    training_stack: Annotated[TrainingStack, Meta(description=(
        "what computes the loss: hf_trainer (eager fp32 cross-entropy), torchtune (chunked), liger (fused linear "
        "cross-entropy) or unsloth (fused loss, checkpoints in CPU RAM)"))] = "hf_trainer"
    experts_loop: Annotated[bool, Meta(description=(
        "a mixture of experts trained or run by generate() through transformers' Python loop over its experts "
        "(transformers 4.x, experts_implementation=\"eager\", or remote code without the experts interface); false: "
        "grouped GEMMs (transformers 5's default grouped_mm, torchtune, Unsloth, Megatron-Core)"))] = False
    experts_loop_hit_only: Annotated[bool, Meta(description=(
        "the loop runs only the experts a decode step's tokens hit, one host sync a layer (DeepSeek's remote code "
        "moe_infer, transformers' later eager blocks that loop over expert_hit); false: every routed expert, a sync "
        "each (transformers 4.51's Qwen3-MoE and Mixtral blocks)"))] = False
    serving_engine: Annotated[ServingEngine, Meta(description=(
        "inference engine: vllm, sglang, llama_cpp or hf_generate; auto: vLLM for a server, llama.cpp at the edge "
        "or for int4, generate() otherwise"))] = "auto"
    transformers_version: Annotated[str, Meta(pattern=RELEASE_PATTERN, description=(
        "the transformers release generate() runs under (pip show transformers: 4.38.2): before 4.45 its prefill "
        "computes the logits at every prompt position and casts them to fp32; before 4.48 its SDPA attention copies "
        "each layer's KV cache to every query head (repeat_kv) at each decode step; empty: 4.48 or later"))] = ""
    cuda_graphs: Annotated[bool, Meta(description=(
        "vLLM or SGLang replays each decode step as captured CUDA graphs (their default); false: --enforce-eager "
        "(vLLM) or --disable-cuda-graph (SGLang), as many vendor launch scripts do: every layer's kernels are "
        "launched from Python at each token (~0.4 ms a layer), and the graphs' memory is not taken"))] = True
    forward_runtime: Annotated[ForwardRuntime, Meta(description=(
        "how a CNN, an encoder or a diffusion denoiser runs (inference): eager PyTorch, which launches each kernel "
        "from the CPU (a floor per batch or denoising step at small batches), or compiled into one launch (a "
        "TensorRT engine, torch.compile with mode=\"reduce-overhead\"); auto: compiled at the edge, eager "
        "otherwise. compiled also takes generate()'s per-layer dispatch out of a decode step (a torch.compile'd "
        "generate, as gpt-fast and fish-speech's --compile run); on several GPUs generate() splits the layers, one "
        "GPU at a time: gpt-fast's tensor parallel is answered task.serving_engine = \"vllm\""))] = "auto"
    quantization: Annotated[Quantization, Meta(description=(
        "int4/int8 weight format: bnb_nf4, gptq_g128, awq_g128, gguf_q4_0, gguf_q4_k_m, and under 4 bits "
        "gguf_q3_k_s and gguf_q2_k (int4); bnb_int8, fp8, "
        "gguf_q8_0 (int8); auto: the engine's (vLLM/SGLang AWQ and FP8, llama.cpp Q4_K_M and Q8_0, generate() "
        "bitsandbytes)"))] = "auto"
    pipeline_offload: Annotated[bool, Meta(description=(
        "Diffusers enable_model_cpu_offload: a pipeline's models (text encoders, denoiser, VAE) wait in system RAM "
        "and each moves to the GPU only while it runs; the GPU holds the largest"))] = False
    block_offload: Annotated[bool, Meta(description=(
        "inference of a diffusion pipeline: every model's blocks wait in system RAM and stream to the GPU as they run, "
        "the next copied while one computes (Diffusers enable_group_offload with use_stream, FramePack's DynamicSwap, "
        "ComfyUI --lowvram): the GPU holds two blocks and the step's working set; each step moves the denoiser's "
        "weights over PCIe"))] = False
    sequence_parallel: Annotated[bool, Meta(description=(
        "each sample split over scale.gpu_count GPUs. Inference of a diffusion model: they make each image or clip "
        "together, each holding the whole pipeline and 1/n of its tokens (xDiT's Ulysses attention, as "
        "HunyuanVideo's, Wan's and Step-Video's multi-GPU launchers run). Training of a transformer: each GPU holds "
        "1/n of every sequence's tokens, their activations and logits, and passes its K and V round the others "
        "(ring attention: EasyContext, Megatron's and torchtitan's context parallel; a video diffusion "
        "transformer's clip too, as Cosmos-Predict2's context parallel); false: each GPU its own "
        "samples"))] = False
    sequence_parallel_gpus: Annotated[int, whole(0, MAX_GPUS, (
        "training under task.sequence_parallel: the GPUs each sequence is split over, a divisor of scale.gpu_count "
        "(0: all of them); the groups take their own samples (4 on 8 GPUs: 4-way sequence parallel x 2-way data "
        "parallel, Megatron's context_parallel_size, torchtitan's cp degree)"))] = 0
    vae_slicing: Annotated[bool, Meta(description=(
        "Diffusers enable_vae_slicing: the VAE decodes a batch's images one at a time, not all at once (the same "
        "images; a batch of 4 at 1024 px in ~6 GiB, not ~25); needs workload.output_width_px"))] = False
    vae_tiling: Annotated[bool, Meta(description=(
        "Diffusers enable_vae_tiling: the VAE decodes the output in tiles (512 px; a video's 256 px), not whole (a "
        "2048 px image in ~1.6 GiB, not ~25); needs workload.output_width_px"))] = False
    frozen_on_cpu: Annotated[bool, Meta(description=(
        "inference of a diffusion pipeline with its frozen models (the text encoders) run on the CPU, as Wan's "
        "--t5_cpu: the GPU holds the denoiser; the prompt encodes once a batch, in seconds there"))] = False
    channels_last: Annotated[bool, Meta(description=(
        "a CNN in channels-last memory format (model.to(memory_format=torch.channels_last), timm's --channels-last, "
        "NVIDIA's DeepLearningExamples' --memory-format nhwc): its activations move ~0.77 of the bytes a training "
        "step in eager PyTorch and ~0.85 a forward pass, and a GeForce card's convolutions reach 0.46 of its tensor "
        "figure, not 0.34 (timm's NHWC and NCHW tables on an RTX 3090)"))] = False
    quantize_moe_experts: Annotated[bool, Meta(description=(
        "a mixture of experts' QLoRA or 8-bit LoRA under the Hugging Face Trainer stacks quantizes its fused routed "
        "experts after loading (Axolotl's quantize_moe_experts: true, bitsandbytes >= 0.48's replace_parameter_4bit); "
        "false: transformers v5 and bitsandbytes leave them 16-bit (Unsloth quantizes them anyway)"))] = False
    ema_weights: Annotated[bool, Meta(description=(
        "training keeps an exponential moving average of the trained weights on each GPU, in fp32 (DiT, PixArt and "
        "Open-Sora trainers, diffusers' --use_ema): 4 B a trained parameter"))] = False
    cache_embeddings: Annotated[bool, Meta(description=(
        "training beside frozen models: their outputs (text embeddings, VAE latents) computed once before training "
        "and cached (kohya-ss cache_text_encoder_outputs and cache_latents, diffusers' --cache_latents), so the frozen "
        "models leave the GPU while it trains"))] = False
    sync_each_batch: Annotated[bool, Meta(description=(
        "training with FSDP under the Hugging Face Trainer (accelerate) and gradient accumulation: reduce-scatter "
        "the gradients every micro-batch (accelerate's GradientAccumulationPlugin(sync_each_batch=True); torchtune, "
        "Composer's llm-foundry, torchtitan and Megatron do it anyway: true for them), so they stay sharded; else "
        "(no_sync) each GPU holds the whole model's gradients until the step's last micro-batch"))] = False
    expert_offload: Annotated[bool, Meta(description=(
        "llama.cpp --cpu-moe: a mixture of experts' routed experts stay in system RAM and run on the CPU; the GPU "
        "holds attention, the shared weights, the KV cache and the experts of as many layers as fit beside them "
        "(--n-cpu-moe N: the build names N)"))] = False
    layer_offload: Annotated[bool, Meta(description=(
        "llama.cpp (and Ollama) partial offload, -ngl N: on the card you have (budget.owned_gpu) or pinned, the "
        "layers it cannot hold stay in system RAM and run on the CPU, with the output layer; the build names N and "
        "times both parts. A card the build buys must hold the whole model"))] = False
    target_tokens_per_s_per_stream: Annotated[float, Meta(ge=0, le=100_000, description=(
        "inference of a language model: the decode rate each stream needs, in tokens/s (0: none); 84 for real-time "
        "Orpheus speech, ~20 to read along. Cards that meet it are chosen before cheaper ones that do not"))] = 0.0
    target_samples_per_s: Annotated[float, Meta(ge=0, le=10_000_000, description=(
        "inference of a model that generates nothing (a CNN, an encoder, a ViT): the inputs (images) a second it must "
        "take (0: none); 25 for one camera at 25 FPS. Cards that meet it come before cheaper ones that do not"))] = 0.0
    prompt_cache_hit_fraction: Annotated[float, Meta(ge=0, le=0.99, description=(
        "a server: the share of each request's prompt the engine's prefix cache already holds (a chat's earlier "
        "turns, a shared system prompt), not prefilled again; 0: every prompt fresh, as vLLM's benchmark_serving "
        "and NVIDIA's AIPerf measure. The rate under load, which a stated target is held to, prefills the rest"))] = 0.0
    prefill_chunk_tokens: Annotated[int, whole(0, 10_000_000, (
        "inference: the tokens one prefill step runs, its working set's size (vLLM --max-num-batched-tokens, SGLang "
        "--chunked-prefill-size, llama.cpp -ub); 0: the engine's default (vLLM 2,048, SGLang 8,192, llama.cpp "
        "512). Qwen2.5-1M's launch command sets 131,072"))] = 0
    kv_cache_dtype: Annotated[KvCacheDtype, Meta(description=(
        "KV cache precision: auto (16-bit, or fp32 with fp32 weights), fp8 (vLLM/SGLang --kv-cache-dtype fp8, "
        "llama.cpp -ctk/-ctv q8_0): half the KV cache, or q4_0 (llama.cpp -ctk/-ctv q4_0): a quarter"))] = "auto"


class AnswersFile(Schema, frozen=True):
    """A whole answers table: the scenario, then the sections; a section (table) or key left out takes its defaults."""

    scenario: Scenario
    workload: Workload = field(default_factory=Workload)
    task: Task = field(default_factory=Task)
    data: Data = field(default_factory=Data)
    scale: Scale = field(default_factory=Scale)
    budget: Budget = field(default_factory=Budget)


SECTION_TYPES: dict[str, type[Schema]] = {
    "workload": Workload, "task": Task, "data": Data, "scale": Scale, "budget": Budget,
}
