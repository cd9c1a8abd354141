"""Records and summary of ``mlx26 profile-memory`` (He, Ma, Sun, Cong, ICML 2026; our layout).

One record per stage — measured seconds and share of the end-to-end time, FLOPs, bytes,
arithmetic intensity, the roofline bound against the measured ceilings of the device that ran
(with its ridge point), and the modelled time of the same work on the GPU and FPGA specs — then
one "total" record with the memory-processing share and the modelled GPU-only vs GPU+FPGA
speedup and energy ratio next to the paper's reported ranges.
"""

from __future__ import annotations

from typing import Any

from mlx26.core.profile_memory.costs import STAGES
from mlx26.core.profile_memory.devices import DeviceSpec
from mlx26.core.profile_memory.placement import plan
from mlx26.core.profile_memory.profiler import OFFLOADED, ProfileOptions


def records(opts: ProfileOptions, result: dict[str, Any], measured: DeviceSpec, specs: dict[str, DeviceSpec],
            placement: str, overlap: bool, model_name: str) -> list[dict[str, Any]]:
    costs, times, e2e = result["costs"], result["stages"], result["end_to_end_s"]
    steps = opts.decode_steps
    emulated = opts.device == "fpga"
    rows: list[dict[str, Any]] = []
    if result["setup_s"]:
        rows.append({"pipeline": opts.pipeline, "stage": "setup: context prefill",
                     "device": "cpu" if emulated else opts.device,
                     "time_s": result["setup_s"], "share": None, "note": "not in the timed request"})
    for stage in STAGES:
        cost = costs[stage]
        ran_on = "fpga" if emulated and stage in OFFLOADED[opts.pipeline] else ("cpu" if emulated else opts.device)
        row: dict[str, Any] = {
            "pipeline": opts.pipeline, "stage": stage, "device": ran_on,
            "time_s": times[stage], "share": times[stage] / e2e if e2e > 0 else 0.0,
            "ms_per_step": 1e3 * times[stage] / steps,
            "flops": cost.flops, "bytes": cost.bytes,
            "intensity": cost.intensity if cost.bytes else None,
            "bound": measured.bound(cost) if cost.bytes else None,
            f"modelled_{specs['gpu'].name}_s": specs["gpu"].time(cost),
            f"modelled_{specs['fpga'].name}_s": specs["fpga"].time(cost),
        }
        if ran_on == "fpga":
            row["time_kind"] = (f"{opts.fpga_backend} wall clock on the host CPU (NOT an FPGA time; "
                                f"see modelled_{specs['fpga'].name}_s)") if opts.fpga_backend == "emu" else "xrt wall clock"
        else:
            row["time_kind"] = "measured"
        rows.append(row)
    p = plan(costs.stages, specs["gpu"], specs["fpga"], placement, overlap)
    total = {
        "pipeline": opts.pipeline, "stage": "total", "device": opts.device, "model": model_name,
        "context": opts.context, "decode_steps": steps, "budget": opts.budget, "seed": opts.seed, "dtype": opts.dtype,
        "batch": opts.batch,
        "time_s": e2e, "stage_sum_s": result["stage_sum_s"],
        "sum_vs_end_to_end": result["stage_sum_s"] / e2e - 1.0 if e2e > 0 else 0.0,
        "memory_share": result["memory_share"],
        "ridge_flop_per_byte": measured.ridge, "ceilings": measured.source,
        "modelled": p["label"], "gpu_spec": p["gpu"], "fpga_spec": p["fpga"], "placement": placement,
        "overlap": overlap, "on_fpga": p["on_fpga"], "speedup": p["speedup"], "energy_ratio": p["energy_ratio"],
        "gpu_only_s": p["gpu_only_s"], "hetero_s": p["hetero_s"],
        "paper_speedup": "1.04–2.2×", "paper_energy_ratio": "1.11–4.7×",
        "fpga_kernel_gb_s": {row["kernel"]: row["derived_gb_s"] for row in p["fpga_kernels"]},
        "fpga_kernel_gb_s_basis": "DERIVED from the fpga/hls kernels: ports × bytes/cycle × kernel clock, each port "
                                  "capped by one HBM channel" if p["fpga_kernels"] else "no HLS kernel model in the spec",
        "fpga_datasheet_mem_gb_s": specs["fpga"].mem_bw / 1e9,
        **result["info"],
    }
    rows.append(total)
    result["plan"] = p
    return rows
