"""A UNet denoiser's FLOPs a pass where none is counted: from its parameters and the pixels it makes.

A UNet (SD 1.5, SDXL, SSD-1B, Kolors) runs most of its weights on a quarter or a sixteenth of the latent grid, so
2N a latent token (a diffusion transformer's count) is several times its real one. Its count follows its parameters
and its output's pixels: SDXL's 6,761 GFLOP a pass at 1024 px over 2,567M parameters is 2.51e-3 FLOP a parameter a
pixel, SD 1.5's 803.3 at 512 px over 859.5M 3.57e-3 (both counted with torch.utils.flop_counter on diffusers'
UNet2DConditionModel, tests/configs/published_workloads.py); their mean, 3.0e-3, is within 20 % of either.
"""

from __future__ import annotations

from pth_top.configs.answer_types import Workload

UNET_FLOPS_PER_PARAMETER_PIXEL = 3.0e-3
ESTIMATE_SOURCE = (f"workload.unet: {UNET_FLOPS_PER_PARAMETER_PIXEL:g} FLOP a parameter a pixel, the mean of SDXL's "
                   "and SD 1.5's counts, within 20 % of either")
COUNTED_SOURCE = "workload.forward_gflops_per_sample, counted"


def denoiser_gflops_per_pass(workload: Workload, parameters: int) -> tuple[float, str]:
    """A denoiser's GFLOPs for one pass over one image, and where they come from: counted as answered, else a UNet's
    estimate at its output's pixels; (0, "") where neither is known."""
    if workload.forward_gflops_per_sample:
        return workload.forward_gflops_per_sample, COUNTED_SOURCE
    pixels = workload.output_width_px * workload.output_height_px
    if workload.unet and pixels:
        return UNET_FLOPS_PER_PARAMETER_PIXEL * parameters * pixels / 1e9, \
            f"{ESTIMATE_SOURCE}, x {parameters / 1e6:,.0f}M parameters x {pixels:,} pixels"
    return 0.0, ""
