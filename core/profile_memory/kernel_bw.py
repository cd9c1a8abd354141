"""Memory bandwidth of each HLS kernel of ``fpga/hls``, derived from its design (ports × width × clock).

Part of our reconstruction of the GPU + Alveo U55C system of He, Ma, Sun, Cong (ICML 2026). A
datasheet HBM figure (460 GB/s on the U55C) says what the memory could deliver, not what a kernel
can pull through its ports: a 512-bit ``m_axi`` port moving one beat per cycle at 300 MHz takes
64 B × 300 MHz = 19.2 GB/s, and a buffer lies in one HBM pseudo-channel (460 / 32 ≈ 14.4 GB/s),
which caps that port. So a kernel's bandwidth is

    min(ports × min(port bytes per cycle × clock, channel bandwidth), HBM bandwidth)

with ``ports`` the ports that stream at the same time in the kernel's steady state (the light side
ports — the query, the indices, the per-page outputs — are not counted, so the figure is a little
conservative for them). The ports and widths below are read off the kernel sources (tests check
them against the C++); the clock and the channel count are properties of the spec
(:class:`mlx26.core.profile_memory.devices.DeviceSpec`: ``kernel_clock_hz``, ``hbm_channels``).
The stages that have no HLS kernel (attention, the indexer's projection, RAG's embedding) stay on
the spec's roofline at the datasheet bandwidth, an idealised figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlx26.fpga.emu import TOPK_CELLS

BEAT_BYTES = 64  # one 512-bit beat of 16 float32


@dataclass(frozen=True)
class KernelPorts:
    name: str
    ports: int  # m_axi ports streaming at the same time in the steady state
    port_bytes: int  # bytes per port per cycle at the kernel's II (64: one 512-bit beat at II=1)
    access: str  # "streaming" | "irregular": which efficiency of the spec applies
    design: str  # where the figure comes from in the kernel

    @property
    def bytes_per_cycle(self) -> int:
        return self.ports * self.port_bytes

    def bandwidth(self, clock_hz: float, channel_bw: float, hbm_bw: float) -> float:
        """Bytes/s the kernel moves: its ports at the clock, each capped by one HBM channel, all by the HBM."""
        per_port = self.port_bytes * clock_hz
        if channel_bw > 0:
            per_port = min(per_port, channel_bw)
        return min(self.ports * per_port, hbm_bw)


KERNELS: dict[str, KernelPorts] = {
    k.name: k
    for k in (
        KernelPorts("page_minmax", 1, BEAT_BYTES, "streaming",
                    "keys read at one 512-bit beat per cycle (II=1); kmin/kmax written once per page"),
        KernelPorts("page_score", 2, BEAT_BYTES, "streaming",
                    "kmin and kmax read together, one 512-bit beat each per cycle (II=1)"),
        KernelPorts("topk_select", 1, 4, "irregular",
                    f"its {TOPK_CELLS}-cell systolic chain takes one 32-bit score per cycle; "
                    f"k > {TOPK_CELLS} rereads the row once per {TOPK_CELLS}"),
        KernelPorts("gather_rows", 2, BEAT_BYTES, "irregular",
                    "src read and dst written, one 512-bit beat each per cycle (II=1), a burst per row"),
    )
}


def topk_passes(k: int) -> int:
    """Passes of topk_select over a row: the chain selects up to TOPK_CELLS entries per pass."""
    return max(1, math.ceil(k / TOPK_CELLS))


def topk_traffic(rows: int, n: int, k: int, itemsize: int = 4) -> float:
    """Bytes topk_select reads: every pass streams the whole row of scores (none when nothing is selected)."""
    if k < 1:
        return 0.0
    return float(itemsize * rows * n * topk_passes(k))
