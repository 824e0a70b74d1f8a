"""A desktop system (DGX Spark): a whole computer around its GPU, so a build of one part."""

from __future__ import annotations

from pth_top.configs.assembly import Assembly, Context, run_fits
from pth_top.configs.parts import Part
from pth_top.configs.rules import storage_capacity_gb

# An external power brick's efficiency at load (wall draw = load / this); edge modules use it too.
EXTERNAL_ADAPTER_EFFICIENCY = 0.9

def assemble_desktop_system(ctx: Context, asm: Assembly, system: Part) -> None:
    """A desktop system brings its CPU, RAM, drive and supply: only its drive is checked against the job."""
    task = ctx.answers.task
    capacity = storage_capacity_gb(ctx.answers.data.dataset_size_gb, ctx.shape.parameters, ctx.rules, mode=task.mode,
                                   precision=task.precision, method=task.method, run_fits=run_fits(ctx, asm))
    included = system["included_storage_gb"]
    asm.reasons["gpu"].extend([
        f"{system.name} is a whole computer: its CPU, memory, {included:,.0f} GB drive and supply come with it",
        f"its drive against the storage floor: {capacity.reason}",
        "its memory is one pool: the weights load (or a 16-bit checkpoint is quantized shard by shard) into the "
        "memory the GPU reads, so no separate host copy is staged"])
    if included < capacity.value:
        asm.unsatisfied_add(f"its {included:,.0f} GB drive is below the storage floor: {capacity.reason}")
    if ctx.gpu_count != 1:
        asm.unsatisfied_add(f"{system.name} is one box: {ctx.gpu_count} of them over their network ports are not "
                            "sized (set the GPU count to 1)")
    asm.sustained_w = system["board_power_w"]
    asm.peak_w = system["transient_peak_w"]
    asm.psu_required_w = asm.psu_capacity_w = 0.0
    asm.wall_w = asm.sustained_w / EXTERNAL_ADAPTER_EFFICIENCY
    asm.power_lines = (f"up to {system['board_power_w']:g} W from its own {system['transient_peak_w']:g} W adapter; "
                       "no PC PSU, CPU, RAM, board or drive to buy",)
    asm.heat_line = "cooling: the system's own fans; keep its vents clear"
