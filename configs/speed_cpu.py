"""A CPU-only build's speed: llama.cpp on the CPU reads the weights from system RAM once per generated token, so
decode is tokens/s = achieved RAM bandwidth / bytes per token; the prompt's prefill is compute-bound, at a rate per
core and GHz.

RAM bandwidth = populated channels x MT/s x 8 bytes. Sources: llama.cpp issue #4716 (Mixtral 8x7B Q8_0, 128 GB at
3600 MT/s in two channels: Ryzen 9 7950X DDR5 3.37 tokens/s, Ryzen 9 5900X DDR4 3.58 tokens/s); normiebench's
CPU-backend results (github.com/brand-o/normiebench issues 34, 42, 52: Llama 3.1 8B Q4_K_M pp512).
"""

from __future__ import annotations

from pth_top.configs import speed as sp
from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.build import Component
from pth_top.configs.memory_inference import forward_only
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.speed_forward import forward_flops, forward_flops_per_sample
from pth_top.configs.speed_reads import decode_reads, prefill_flops

# The 7950X row above: 12.9B active parameters x 8.5 bits = 13.7 GB a token at 3.37/s = 46 GB/s, 0.80 of 57.6.
CPU_DECODE_BANDWIDTH_FRACTION = 0.8
# DDR5 at two DIMMs per channel on a desktop: 3600 MT/s, AMD's limit and the speed #4716's 4 x 32 GB ran at (some
# Intel boards allow 4000 for single-rank DIMMs: this is the lower bound).
DDR5_TWO_PER_CHANNEL_MT_PER_S = 3600
BYTES_PER_TRANSFER = 8  # a 64-bit DIMM channel
# llama.cpp's AVX2 prefill (pp512, Llama 3.1 8B Q4_K_M, 16 GFLOP a token) per core and boost GHz: i5-9500 35.43
# t/s = 21.5, i7-7820HQ 22.53 = 23.1, Threadripper 3970X 155.5 = 17.3 FLOP a cycle; the median.
CPU_PREFILL_FLOP_PER_CYCLE = 21.5
# A CNN's convolutions in ONNX Runtime on a desktop CPU reach ~0.4 of that rate: mmpose's RTMPose rows on an i7-11700
# (8 cores x 4.9 GHz), eight models of 0.72-20 GFLOP at 3.2-44.6 ms, give 0.27-0.54, median 0.41 (fitted there).
CPU_CNN_FRACTION = 0.4
# An encoder in PyTorch on a CPU: sentence-transformers lists all-MiniLM-L6-v2 at ~750 sentences a second, where the
# prefill rate above gives ~1,600 on a Core i5-12400 (its CPU unnamed: a share to warn by, not a fitted rate).
CPU_ENCODER_LISTED_SHARE = 750 / 1600


def ram_bandwidth_gb_per_s(cpu: dict, kit: dict, kits_count: int) -> tuple[float, str]:
    """GB/s of the CPU's populated memory channels at the speed the DIMMs run, and how it was reckoned."""
    channels = int(cpu.get("memory_channels_count", 0) or 0)
    dimms = int(kit.get("modules_count", 0) or 0) * kits_count
    speed_mt_per_s = float(kit.get("speed_mt_per_s", 0) or 0)
    used = min(channels, dimms)
    note = ""
    if kit.get("memory_type") == "DDR5" and cpu.get("platform") == "desktop" and dimms > channels:
        speed_mt_per_s = min(speed_mt_per_s, DDR5_TWO_PER_CHANNEL_MT_PER_S)
        note = f" (two DDR5 DIMMs a channel run at {DDR5_TWO_PER_CHANNEL_MT_PER_S:,} MT/s on a desktop)"
    gb_per_s = used * speed_mt_per_s * BYTES_PER_TRANSFER / 1000
    return gb_per_s, (f"{used} channels x {speed_mt_per_s:,.0f} MT/s x {BYTES_PER_TRANSFER} B = {gb_per_s:,.1f} "
                      f"GB/s{note}")


def core_gigahertz(cpu: dict) -> float:
    """The CPU's vector work a second in P-core GHz: P-cores x boost clock + E-cores x their clock x their share of a
    P-core's vector work a cycle (efficiency_core_vector_ratio)."""
    cores = int(cpu.get("cores_count", 0) or 0)
    ghz = float(cpu.get("boost_clock_ghz", 0) or 0) or float(cpu.get("base_clock_ghz", 0) or 0)
    efficiency_cores = int(cpu.get("efficiency_cores_count", 0) or 0)
    efficiency_ghz = float(cpu.get("efficiency_boost_clock_ghz", 0) or 0)
    efficiency_ratio = float(cpu.get("efficiency_core_vector_ratio", 0) or 0)
    return (cores - efficiency_cores) * ghz + efficiency_cores * efficiency_ghz * efficiency_ratio


def cpu_flops_per_s(cpu: dict) -> float:
    """The CPU's matmul rate at llama.cpp's prefill FLOPs a cycle over its core-GHz (0 without cores or clock)."""
    return core_gigahertz(cpu) * 1e9 * CPU_PREFILL_FLOP_PER_CYCLE


def prefill_seconds(shape: ModelShape, prompt: int, cpu: dict) -> tuple[float, str]:
    """Seconds to prefill one prompt on the CPU's cores at their boost clock, and the line saying how; an
    encoder-decoder's input runs through its encoder's share of the layers alone (audit ZI20: Whisper medium's 1,500
    frames were timed through all 769M parameters, ~2.5x its encoder's)."""
    whose = "the encoder's " if shape.encoder_decoder else ""
    flops = prefill_flops(shape.encoder_part if shape.encoder_decoder else shape, prompt)
    cores = int(cpu.get("cores_count", 0) or 0)
    ghz = float(cpu.get("boost_clock_ghz", 0) or 0) or float(cpu.get("base_clock_ghz", 0) or 0)
    efficiency_cores = int(cpu.get("efficiency_cores_count", 0) or 0)
    efficiency_ghz = float(cpu.get("efficiency_boost_clock_ghz", 0) or 0)
    efficiency_ratio = float(cpu.get("efficiency_core_vector_ratio", 0) or 0)
    performance_cores = cores - efficiency_cores
    rate = cpu_flops_per_s(cpu)
    if not rate:
        return 0.0, "not predicted: the catalog gives the CPU no cores or clock"
    seconds = flops / rate
    cores_text = f"{cores} cores x {ghz:g} GHz"
    if efficiency_cores:
        cores_text = (f"({performance_cores} P-cores x {ghz:g} GHz + {efficiency_cores} E-cores x {efficiency_ghz:g} "
                      f"GHz x {efficiency_ratio:g} of a P-core's vector work a cycle)")
    return seconds, (f"{flops / 1e12:.3g} TFLOP / ({cores_text} x {CPU_PREFILL_FLOP_PER_CYCLE:g} FLOP a cycle, "
                     f"llama.cpp's AVX2 prefill) = {sp.duration(seconds)} ({whose}2N x {prompt:,} prompt tokens + "
                     "causal attention 2*L*h*s^2)")


def forward_input_flops(answers: Answers, shape: ModelShape) -> float:
    """One input's forward FLOPs: a CNN's count; an encoder's, or an encoder-decoder's encoder (Whisper's 1,500 audio
    frames), over its input (N without the embedding rows), the encoder's share of the layers; 0 for a decoder that
    generates."""
    if shape.kind != "transformer":
        return forward_flops_per_sample(answers, shape)[0]
    if shape.encoder_only or shape.encoder_decoder:
        flops, _ = forward_flops(shape, shape.sequence_length)
        return flops * ((shape.layers - shape.decoder_layers) / shape.layers if shape.layers else 1.0)
    return 0.0


def cpu_forward_predicted(shape: ModelShape) -> bool:
    """Whether one input's forward is timed on a CPU's cores: an encoder's, or a CNN's (not a denoiser's)."""
    return bool(shape.parameters) and (forward_only(shape) or (shape.kind == "cnn" and not shape.denoising_steps))


def cpu_input_flop_per_cycle(shape: ModelShape) -> float:
    """FLOPs a P-core cycle one input's forward runs at: an encoder's matmuls at llama.cpp's prefill rate, a CNN's
    convolutions at CPU_CNN_FRACTION of it."""
    return CPU_PREFILL_FLOP_PER_CYCLE * (CPU_CNN_FRACTION if shape.kind == "cnn" else 1.0)


def cpu_input_flops_per_s(shape: ModelShape, cpu: dict) -> float:
    """The rate one input's forward runs at on the CPU's cores (0 without cores or clock)."""
    return core_gigahertz(cpu) * 1e9 * cpu_input_flop_per_cycle(shape)


def cpu_forward(answers: Answers, shape: ModelShape, cpu: Component) -> sp.Prediction:
    """An encoder's or a CNN's inputs a second on the CPU's cores, at llama.cpp's prefill rate a core and GHz (an
    encoder's matmuls are the same; a CNN's convolutions in ONNX Runtime reach a share of it): one input at a time."""
    out = sp.Prediction()
    flops = forward_input_flops(answers, shape)
    rate = cpu_input_flops_per_s(shape, cpu.spec)
    if not flops or not rate:
        out.summary.append("not predicted for a CPU-only build: the catalog gives the CPU no cores or clock")
        return out
    per_s = rate / flops
    out.figures["samples_per_s"] = per_s
    rate_text = f"{core_gigahertz(cpu.spec):.0f} P-core GHz x {CPU_PREFILL_FLOP_PER_CYCLE:g} FLOP a cycle, " \
        f"llama.cpp's AVX2 prefill rate, {cpu.name}"
    if shape.kind == "cnn":
        out.formula.append(
            f"inference: {flops / 1e9:.3g} GFLOP an input / ({CPU_CNN_FRACTION:g} x {rate_text}) = {per_s:,.0f} "
            "inputs/s in ONNX Runtime (mmpose's RTMPose on an i7-11700: 0.27-0.54 of that rate, the smallest nets "
            "lowest; PyTorch's eager CPU kernels are slower; Ultralytics' own ONNX tables vary with the host: "
            "YOLO26s' 20.7 GFLOP in 87.2 ms within 5 % of this on a Core i5-12400, YOLOv8n-pose's 9.2 in 131.8 ms "
            "on an EC2 P4d host, threads not stated, 3.2x slower)")
    else:
        out.formula.append(
            f"inference: {flops / 1e9:.3g} GFLOP an input / ({rate_text}) = {per_s:,.0f} inputs/s, an upper bound: "
            "PyTorch's eager CPU kernels are not fitted here, and sentence-transformers lists all-MiniLM-L6-v2, "
            "~1,600 a second at 16 tokens on a Core i5-12400 by this rate, at ~750 on an unnamed CPU")
        stated = sp.stated_target(answers.task)
        if stated is not None and stated[0].figure == "samples_per_s" \
                and per_s * CPU_ENCODER_LISTED_SHARE < stated[1] <= per_s:  # met by the bound alone (audit ZS25)
            listed = per_s * CPU_ENCODER_LISTED_SHARE
            out.warnings.append(
                f"the stated {stated[1]:g} inputs/s is met by this rate's upper bound only: sentence-transformers' "
                f"own list puts PyTorch at about {CPU_ENCODER_LISTED_SHARE:.0%} of it, ~{listed:,.0f} inputs/s here; "
                "an ONNX Runtime or OpenVINO export runs nearer the bound, or a GPU build meets it")
    out.summary.append(f"~{per_s:,.0f} inputs/s on the CPU's cores")
    return out


# The engines a server gets by default, which run on GPUs: on a CPU-only PC an encoder runs its batch in PyTorch
# (sentence-transformers) and a decoder in llama.cpp, which is what its speed is timed for.
GPU_ONLY_ENGINES = ("vllm", "sglang")


def speech_model(answers: Answers, shape: ModelShape) -> bool:
    """A speech encoder-decoder (Whisper) runs on a CPU in whisper.cpp, llama.cpp's ggml, or faster-whisper, not in
    generate() (audit ZF19: Whisper base's 74M at $700 was sent to rent an A10, where whisper.cpp encodes its 30 s
    window in ~1.1 s on a 2018 laptop's cores, issue #89)."""
    return shape.encoder_decoder and answers.data.kind == "audio" and answers.task.mode == "inference"


def on_a_cpu(answers: Answers, shape: ModelShape) -> Answers:
    """The answers as a CPU-only PC runs them, its memory and its speed alike: a server's GPU engine (vLLM) is an
    encoder's PyTorch batch or llama.cpp there, and a speech model runs in ggml whatever engine was answered (audit
    ZU36: Moonshine's int8 was timed with bitsandbytes' GPU kernels and counted as GGUF Q8_0)."""
    task = answers.task
    if speech_model(answers, shape):
        return answers.with_value("task", "serving_engine", "llama_cpp")
    default = stacks.serving_engine("auto", answers.scenario, task.precision)
    if task.mode != "inference" or task.serving_engine != "auto" or default not in GPU_ONLY_ENGINES:
        return answers
    return answers.with_value("task", "serving_engine", "hf_generate" if forward_only(shape) else "llama_cpp")


def cpu_inference(answers: Answers, shape: ModelShape, cpu: Component, kit: Component
                  ) -> tuple[sp.Prediction, dict[str, float | str]]:
    """Decode tokens/s on a desktop CPU, or an encoder's inputs a second; an empty prediction where it is not
    predicted (with the reason)."""
    out = sp.Prediction()
    answers = on_a_cpu(answers, shape)
    if answers.task.mode == "inference" and cpu_forward_predicted(shape):
        forward = cpu_forward(answers, shape, cpu)
        return forward, {"cpu": cpu.part_id, "precision": answers.task.precision} if forward.figures else {}
    if answers.task.mode != "inference" or shape.kind != "transformer" or not shape.parameters \
            or shape.denoising_steps:
        out.summary.append("not predicted for a CPU-only build: only a language model's decode, an encoder's and a "
                           "CNN's inference are")
        return out, {}
    if cpu.spec.get("platform") != "desktop":
        out.summary.append(f"not predicted on {cpu.name}: a many-channel workstation or server CPU reaches a "
                           "share of its RAM bandwidth that depends on NUMA and threads")
        return out, {}
    bandwidth, bandwidth_line = ram_bandwidth_gb_per_s(cpu.spec, kit.spec, kit.quantity)
    reads = decode_reads(answers, shape)
    batch = answers.workload.batch_size
    step_bytes = reads.read_bytes + batch * reads.kv_bytes
    achieved = CPU_DECODE_BANDWIDTH_FRACTION * bandwidth
    per_stream = achieved * 1e9 / step_bytes if step_bytes else 0.0
    out.figures.update(decode_tokens_per_s_per_stream=per_stream, decode_tokens_per_s_aggregate=per_stream * batch)
    out.formula.extend([
        reads.line,
        f"RAM: {bandwidth_line} ({cpu.name}, {kit.quantity} x {kit.name})",
        f"decode: {reads.read_bytes / 1e9:.3g} GB weights + {batch} x {reads.kv_bytes / 1e9:.3g} GB KV cache per step "
        f"at {CPU_DECODE_BANDWIDTH_FRACTION:g} x {bandwidth:,.1f} GB/s = {per_stream:,.1f} tokens/s per stream "
        "(llama.cpp issue #4716)",
    ])
    first_s, first_line = prefill_seconds(shape, reads.prompt, cpu.spec)
    out.formula.append(f"first token: {first_line}")
    streams = f" ({per_stream * batch:,.1f} for all {batch})" if batch > 1 else ""
    first = f"first token after a {reads.prompt:,}-token prompt in ~{sp.duration(first_s)}" if first_s else \
        "the first token is not predicted"
    if first_s:
        out.figures["first_token_s"] = first_s
    out.summary.append(f"~{per_stream:,.1f} tokens/s per stream{streams} from system RAM; {first}")
    if per_stream < sp.SLOW_DECODE_TOKENS_PER_S:
        out.warnings.append(f"slow: ~{per_stream:.1f} tokens/s per stream on {cpu.name}'s RAM is under "
                            f"{sp.SLOW_DECODE_TOKENS_PER_S:g} tokens/s, slower than reading; a GPU decodes faster")
    if first_s > sp.SLOW_FIRST_TOKEN_S:
        out.warnings.append(f"slow: the first token takes ~{sp.duration(first_s)} on {cpu.name} (over "
                            f"{sp.SLOW_FIRST_TOKEN_S:g} s): a CPU's prefill is compute-bound; a GPU, or shorter "
                            "prompts, answer sooner")
    inputs: dict[str, float | str] = {"cpu": cpu.part_id, "ram_bandwidth_gb_per_s": round(bandwidth, 3),
                                      "parameters": float(shape.parameters), "precision": answers.task.precision}
    return out, inputs
