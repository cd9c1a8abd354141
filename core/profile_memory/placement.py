"""Placement planner: GPU-only vs GPU + FPGA for the four memory-processing stages (modelled).

Reconstruction of the heterogeneous system study of He, Ma, Sun, Cong (ICML 2026: MI210 + Alveo
U55C, reported 1.04–2.2× faster and 1.11–4.7× less energy). Their planner is not public; ours:

* The FPGA takes one contiguous run of the pipeline stages prepare → relevancy → retrieval →
  apply (the memory lives where that run starts); "other" and ``pinned`` stages (the model's
  own layers in a RAG / memory prefill, plain dense attention) stay on the GPU.
* PCIe traffic = the ``in_bytes`` of the run's first stage + the ``out_bytes`` of its last,
  at the FPGA's link bandwidth, plus one link latency each way per call.
* ``overlap`` on: GPU and FPGA work of different requests is pipelined, so the time is
  max(GPU busy, FPGA busy + transfers); off: the sum.
* Placement ``gpu``: nothing offloaded. ``hetero``: the first run of stages that are
  memory-bound on the GPU spec. ``auto``: the run (or none) with the least modelled time.
* Energy: busy time × active power + the rest of the run × idle power, per device
  (the GPU-only system has no FPGA).

Everything here is modelled from the profiled FLOPs/bytes and the DeviceSpecs, never measured.
"""

from __future__ import annotations

from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.profile_memory.costs import PIPELINE_STAGES, STAGES, StageCost
from mlx26.core.profile_memory.devices import DeviceSpec
from mlx26.core.profile_memory.spec import PLACEMENTS

PAPER_SPEEDUP = (1.04, 2.2)
PAPER_ENERGY = (1.11, 4.7)


def _runs() -> list[tuple[int, int]]:
    n = len(PIPELINE_STAGES)
    return [(a, b) for a in range(n) for b in range(a + 1, n + 1)]


def _offloadable(cost: StageCost) -> bool:
    return cost.calls > 0 and not cost.pinned


def _evaluate(costs: dict[str, StageCost], gpu: DeviceSpec, fpga: DeviceSpec, run: tuple[int, int] | None,
              overlap: bool) -> dict[str, Any]:
    on_fpga = set(PIPELINE_STAGES[run[0]:run[1]]) if run else set()
    gpu_busy = sum(gpu.time(costs[s]) for s in STAGES if s not in on_fpga)
    fpga_busy = sum(fpga.time(costs[s]) for s in on_fpga)
    transfer = 0.0
    if run:
        first, last = costs[PIPELINE_STAGES[run[0]]], costs[PIPELINE_STAGES[run[1] - 1]]
        transfer = (first.in_bytes + last.out_bytes) / fpga.link_bw + (first.calls + last.calls) * fpga.link_latency_s
    total = max(gpu_busy, fpga_busy + transfer) if overlap else gpu_busy + fpga_busy + transfer
    energy = gpu_busy * gpu.active_w + (total - gpu_busy) * gpu.idle_w
    if run is not None:
        energy += fpga_busy * fpga.active_w + (total - fpga_busy) * fpga.idle_w
    return {"time_s": total, "energy_j": energy, "gpu_busy_s": gpu_busy, "fpga_busy_s": fpga_busy,
            "transfer_s": transfer, "on_fpga": [s for s in PIPELINE_STAGES if s in on_fpga]}


def plan(costs: dict[str, StageCost], gpu: DeviceSpec, fpga: DeviceSpec, placement: str = "auto",
         overlap: bool = True) -> dict[str, Any]:
    """Modelled GPU-only vs heterogeneous time and energy for per-stage costs."""
    if placement not in PLACEMENTS:
        raise InputError(f"Unknown placement '{placement}'.", "choose one of: " + ", ".join(PLACEMENTS))
    base = _evaluate(costs, gpu, gpu, None, overlap)
    if placement == "gpu":
        het = base
    elif placement == "hetero":
        bounds = [gpu.bound(costs[s]) == "memory" and _offloadable(costs[s]) for s in PIPELINE_STAGES]
        start = next((i for i, b in enumerate(bounds) if b), None)
        if start is None:
            het = _evaluate(costs, gpu, fpga, None, overlap)
            het = {**het, "energy_j": het["energy_j"] + het["time_s"] * fpga.idle_w}
        else:
            stop = start
            while stop < len(bounds) and bounds[stop]:
                stop += 1
            het = _evaluate(costs, gpu, fpga, (start, stop), overlap)
    else:
        none = _evaluate(costs, gpu, fpga, None, overlap)
        none = {**none, "energy_j": none["energy_j"] + none["time_s"] * fpga.idle_w}
        options = [none] + [_evaluate(costs, gpu, fpga, r, overlap) for r in _runs()
                            if all(_offloadable(costs[s]) for s in PIPELINE_STAGES[r[0]:r[1]])]
        het = min(options, key=lambda o: (o["time_s"], o["energy_j"]))
    speedup = base["time_s"] / het["time_s"] if het["time_s"] > 0 else 1.0
    energy_ratio = base["energy_j"] / het["energy_j"] if het["energy_j"] > 0 else 1.0
    return {
        "label": "MODELLED (roofline + PCIe + launch model; not a measurement)",
        "gpu": gpu.name, "fpga": fpga.name, "placement": placement, "overlap": overlap,
        "on_fpga": het["on_fpga"],
        "gpu_only_s": base["time_s"], "hetero_s": het["time_s"], "speedup": speedup,
        "gpu_only_j": base["energy_j"], "hetero_j": het["energy_j"], "energy_ratio": energy_ratio,
        "transfer_s": het["transfer_s"], "fpga_busy_s": het["fpga_busy_s"], "gpu_busy_s": het["gpu_busy_s"],
        "paper_speedup_range": list(PAPER_SPEEDUP), "paper_energy_ratio_range": list(PAPER_ENERGY),
        "fpga_kernels": fpga.kernel_table(),
        "assumptions": assumptions(gpu, fpga, overlap),
    }


def assumptions(gpu: DeviceSpec, fpga: DeviceSpec, overlap: bool) -> list[str]:
    return [
        f"GPU spec: {gpu.source or gpu.name}",
        f"FPGA spec: {fpga.source or fpga.name}",
        f"FPGA bandwidth: {fpga.bandwidth_summary()}",
        "time per stage = max(flops/(peak·eff), bytes/(bw·eff)) + launches × launch latency (roofline); on the FPGA "
        "the bytes of a stage an HLS kernel does (Quest prepare/relevancy, every retrieval's top-k and gather) move "
        "at that kernel's derived bandwidth × eff, the other stages' at the spec's memory bandwidth × eff",
        "GPU launches = kernels of our torch implementation per stage; FPGA = one fused kernel call per stage call",
        "FPGA takes one contiguous run of prepare→relevancy→retrieval→apply; the model's other layers stay on GPU",
        f"PCIe: in-bytes of the run's first stage + out-bytes of its last at {fpga.link_bw / 1e9:g} GB/s, "
        f"{fpga.link_latency_s * 1e6:g} µs per crossing",
        "overlap ON: GPU and FPGA pipelined across requests, time = max(busy)" if overlap
        else "overlap OFF: time = GPU busy + FPGA busy + transfers",
        "energy = busy × active W + (total − busy) × idle W per device",
        "counts are at the run's dtype (float32) and batch 1",
    ]
