"""FLOP and byte accounting of the four memory-processing stages (He, Ma, Sun, Cong, ICML 2026).

The paper splits sparse attention, RAG and compressed memory into Prepare Memory, Compute
Relevancy, Retrieval and Apply to Inference; "other" is the rest of the model (projections,
MLP, norms, LM head). Every pipeline adds closed-form counts here as it runs; they are our
own formulas (the paper publishes none), stated next to each helper. Comparisons and max/min
count as one operation ("FLOP") each; bytes are what a kernel must read plus write at the
tensor dtype's size, assuming no cache reuse between kernels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

STAGES = ("prepare", "relevancy", "retrieval", "apply", "other")
MEMORY_STAGES = ("prepare", "relevancy", "retrieval")  # the "memory-processing share"
PIPELINE_STAGES = ("prepare", "relevancy", "retrieval", "apply")  # candidates for offload


@dataclass
class StageCost:
    """Accumulated work of one stage: operations, bytes moved, GPU kernel launches, calls.

    ``irregular``: bytes moved by data-dependent (gather / top-k) accesses, a subset of ``bytes``.
    ``in_bytes`` / ``out_bytes``: what crosses a device boundary if this stage runs on another
    device than its neighbours (the placement model's PCIe traffic). ``pinned``: the stage
    is the LM's own work (RAG / memory prefill, plain dense attention), not memory processing,
    and stays on the GPU in every placement. ``kernel_bytes``: the traffic of the HLS kernels
    (``fpga/hls``) that would do this stage on the FPGA, by kernel name (topk_select counts one row
    read per pass); the FPGA model times it at that kernel's derived bandwidth
    (:mod:`mlx26.core.profile_memory.kernel_bw`), and the rest of ``bytes`` at the spec's.
    """

    flops: float = 0.0
    bytes: float = 0.0
    irregular: float = 0.0
    launches: int = 0
    calls: int = 0
    in_bytes: float = 0.0
    out_bytes: float = 0.0
    pinned: bool = False  # the LM's own work: never offloaded to the FPGA
    kernel_bytes: dict[str, float] = field(default_factory=dict)

    def add(self, flops: float = 0.0, bytes: float = 0.0, *, irregular: float = 0.0, launches: int = 0,
            calls: int = 1, in_bytes: float = 0.0, out_bytes: float = 0.0, pinned: bool = False,
            kernels: dict[str, float] | None = None) -> None:
        self.flops += flops
        self.bytes += bytes
        self.irregular += irregular
        self.launches += launches
        self.calls += calls
        self.in_bytes += in_bytes
        self.out_bytes += out_bytes
        self.pinned = self.pinned or pinned
        for name, traffic in (kernels or {}).items():
            self.kernel_bytes[name] = self.kernel_bytes.get(name, 0.0) + traffic

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes if self.bytes else math.inf


@dataclass
class CostBook:
    """One StageCost per stage."""

    stages: dict[str, StageCost] = field(default_factory=lambda: {s: StageCost() for s in STAGES})

    def __getitem__(self, stage: str) -> StageCost:
        return self.stages[stage]


def linear_cost(tokens: int, n_params: int, width_in: int, width_out: int, itemsize: int = 4) -> tuple[float, float]:
    """A stack of linear layers with ``n_params`` weights on ``tokens`` rows: 2·params·tokens FLOPs;
    weights read once plus the activations in and out."""
    return 2.0 * n_params * tokens, itemsize * (n_params + tokens * (width_in + width_out))


def attention_cost(q_tokens: int, kv_tokens: int, heads: int, dim: int, itemsize: int = 4,
                   causal: bool = False) -> tuple[float, float]:
    """softmax(QKᵀ)V: 4·h·q·kv·d FLOPs (+5 per score for the softmax), halved when causal and square;
    Q, K, V read and O written once."""
    pairs = q_tokens * kv_tokens * (0.5 if causal and q_tokens == kv_tokens else 1.0)
    flops = heads * pairs * (4 * dim + 5)
    return flops, itemsize * heads * dim * (2 * q_tokens + 2 * kv_tokens)


def topk_ops(n: int, k: int) -> float:
    """A selection of k from n: n·⌈log2 k⌉ comparisons (heap / insertion-array bound)."""
    return n * max(1.0, math.ceil(math.log2(max(k, 2))))
