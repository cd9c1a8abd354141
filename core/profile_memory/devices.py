"""Device model: a roofline with efficiencies, launch latency and power (He, Ma, Sun, Cong, ICML 2026).

The paper models and measures an AMD MI210 + Alveo U55C system; its model's parameters are not
public, so :class:`DeviceSpec` is our reconstruction. A stage's modelled time on a device is

    max(flops / (peak · flop_eff), dense_bytes / (bw · bw_eff) + irregular_bytes / (bw · irregular_eff))
    + launches · launch_s

where ``launches`` is the number of GPU kernels (GPU/CPU) or of fused kernel calls (FPGA), and
energy = time · active_w while busy, idle_w otherwise. On an FPGA spec with a kernel clock
(``kernel_clock_hz`` > 0, the U55C's 300 MHz), the bytes an HLS kernel of ``fpga/hls`` moves
(``StageCost.kernel_bytes``) are timed at that kernel's bandwidth derived from its ports
(:mod:`mlx26.core.profile_memory.kernel_bw`: ports × width × clock, each port capped by one HBM
pseudo-channel, ``mem_bw / hbm_channels``) instead of at ``mem_bw``; ``mem_bw`` (the datasheet's
idealised figure) is left for the bytes no kernel moves. Peaks and bandwidths of the built-ins are
datasheet numbers; idle power, launch latency and the efficiencies are ASSUMPTIONS, listed in
``source`` and printed with every modelled result. The "cpu" spec is measured at start
(:mod:`mlx26.core.profile_memory.ceilings`). User specs: a JSON file (see :func:`load_specs`).

Roofline bound: memory-bound when arithmetic intensity (flops / bytes) < peak / bw (the ridge).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.profile_memory.costs import StageCost
from mlx26.core.profile_memory.kernel_bw import KERNELS
from mlx26.core.profile_memory.spec import DEVICES


@dataclass(frozen=True)
class DeviceSpec:
    name: str
    kind: str  # "gpu" | "fpga" | "cpu"
    peak_flops: float  # FLOP/s
    mem_bw: float  # bytes/s
    active_w: float
    idle_w: float
    launch_s: float  # per GPU kernel launch / per FPGA kernel call
    flop_eff: float = 0.7
    bw_eff: float = 0.8
    irregular_eff: float = 0.8  # bandwidth efficiency of data-dependent gathers / top-k
    link_bw: float = 16e9  # PCIe to the peer device, bytes/s
    link_latency_s: float = 5e-6
    source: str = ""
    kernel_clock_hz: float = 0.0  # FPGA: clock of the fpga/hls kernels; 0 = no kernel model, roofline only
    hbm_channels: float = 0.0  # FPGA: HBM pseudo-channels (a port reaches one); 0 = no per-port cap

    @property
    def ridge(self) -> float:
        return self.peak_flops / self.mem_bw

    def bound(self, cost: StageCost) -> str:
        return "memory" if cost.intensity < self.ridge else "compute"

    def time(self, cost: StageCost) -> float:
        t_kernels, by_kernel_dense, by_kernel_irregular = self._kernel_time(cost)
        dense = max(cost.bytes - cost.irregular - by_kernel_dense, 0.0)
        irregular = max(cost.irregular - by_kernel_irregular, 0.0)
        t_mem = t_kernels + dense / (self.mem_bw * self.bw_eff) + irregular / (self.mem_bw * self.irregular_eff)
        t_flop = cost.flops / (self.peak_flops * self.flop_eff)
        launches = cost.calls if self.kind == "fpga" else cost.launches
        return max(t_mem, t_flop) + launches * self.launch_s

    def kernel_bw(self, name: str) -> float | None:
        """Derived bandwidth (bytes/s) of an fpga/hls kernel on this spec; None without a kernel model."""
        if self.kind != "fpga" or self.kernel_clock_hz <= 0 or name not in KERNELS:
            return None
        channel = self.mem_bw / self.hbm_channels if self.hbm_channels > 0 else 0.0
        return KERNELS[name].bandwidth(self.kernel_clock_hz, channel, self.mem_bw)

    def _kernel_time(self, cost: StageCost) -> tuple[float, float, float]:
        """(seconds, dense bytes, irregular bytes) of the stage's traffic through modelled kernels."""
        seconds = dense = irregular = 0.0
        for name, traffic in cost.kernel_bytes.items():
            bw = self.kernel_bw(name)
            if bw is None:
                continue  # no kernel model: these bytes stay on the roofline
            streaming = KERNELS[name].access == "streaming"
            seconds += traffic / (bw * (self.bw_eff if streaming else self.irregular_eff))
            if streaming:
                dense += traffic
            else:
                irregular += traffic
        return seconds, dense, irregular

    def kernel_table(self) -> list[dict[str, Any]]:
        """Each fpga/hls kernel's ports, width, clock and derived GB/s (empty without a kernel model)."""
        if self.kernel_bw("page_minmax") is None:
            return []
        channel = self.mem_bw / self.hbm_channels if self.hbm_channels > 0 else None
        return [{"kernel": k.name, "ports": k.ports, "bytes_per_cycle_per_port": k.port_bytes,
                 "clock_mhz": self.kernel_clock_hz / 1e6,
                 "port_gb_s": k.port_bytes * self.kernel_clock_hz / 1e9,
                 "channel_cap_gb_s": channel / 1e9 if channel else None,
                 "derived_gb_s": self.kernel_bw(k.name) / 1e9, "access": k.access, "design": k.design}
                for k in KERNELS.values()]

    def bandwidth_summary(self) -> str:
        """One line: the kernels' derived bandwidths, then the datasheet figure, each labelled."""
        table = self.kernel_table()
        datasheet = f"{self.mem_bw / 1e9:g} GB/s memory (spec figure, idealised: used for bytes no HLS kernel moves)"
        if not table:
            return f"{self.name}: {datasheet}; no HLS kernel model"
        kernels = ", ".join(f"{row['kernel']} {row['derived_gb_s']:.4g} GB/s" for row in table)
        cap = (f", each port capped at one HBM channel ({table[0]['channel_cap_gb_s']:.3g} GB/s)"
               if table[0]["channel_cap_gb_s"] else "")
        return (f"{self.name} HLS kernels, DERIVED from fpga/hls (ports × bytes/cycle × {table[0]['clock_mhz']:g} MHz"
                f"{cap}): {kernels}; {datasheet}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


BUILTIN: dict[str, DeviceSpec] = {
    s.name: s
    for s in (
        DeviceSpec("MI210", "gpu", peak_flops=45.3e12, mem_bw=1.6384e12, active_w=300.0, idle_w=40.0,
                   launch_s=8e-6, flop_eff=0.6, bw_eff=0.8, irregular_eff=0.15, link_bw=25e9, link_latency_s=5e-6,
                   source="AMD MI210 datasheet: 45.3 TFLOP/s FP32 matrix, 1.64 TB/s HBM2e, 300 W TDP. ASSUMED: "
                          "idle 40 W, 8 µs launch, efficiencies 0.6 compute / 0.8 streaming / 0.15 irregular"),
        DeviceSpec("A100", "gpu", peak_flops=19.5e12, mem_bw=2.039e12, active_w=400.0, idle_w=50.0,
                   launch_s=5e-6, flop_eff=0.7, bw_eff=0.8, irregular_eff=0.15, link_bw=25e9, link_latency_s=5e-6,
                   source="NVIDIA A100 SXM4 80GB datasheet: 19.5 TFLOP/s FP32, 2.04 TB/s HBM2e, 400 W TDP. "
                          "ASSUMED: idle 50 W, 5 µs launch, efficiencies 0.7 / 0.8 / 0.15 irregular"),
        DeviceSpec("U55C", "fpga", peak_flops=1.08e12, mem_bw=460e9, active_w=60.0, idle_w=25.0,
                   launch_s=20e-6, flop_eff=0.8, bw_eff=0.8, irregular_eff=0.7, link_bw=12e9, link_latency_s=10e-6,
                   kernel_clock_hz=300e6, hbm_channels=32,
                   source="AMD Alveo U55C: 460 GB/s HBM2 in 32 pseudo-channels (datasheet, idealised), PCIe Gen3 "
                          "x16 (~12 GB/s), 150 W max; FP32 peak derived as 9024 DSPs / 5 per multiply-add x 2 x "
                          "300 MHz = 1.08 TFLOP/s; the fpga/hls kernels' bandwidth DERIVED from their ports at "
                          "300 MHz (see the kernel line). ASSUMED: 300 MHz kernel clock (the platform's default, "
                          "not a timing-closed build), 60 W active, 25 W idle, 20 µs per kernel call, efficiencies "
                          "0.8 / 0.8 / 0.7 irregular (burst dataflow kernels)"),
    )
}


def measured_spec(gemm_flops: float, copy_bw: float, threads: int, kind: str = "cpu") -> DeviceSpec:
    """The machine that ran, from its measured ceilings (achieved rates, so efficiencies are 1;
    irregular 0.5 assumed)."""
    return DeviceSpec(f"{kind.upper()} (measured)", kind, peak_flops=gemm_flops, mem_bw=copy_bw, active_w=65.0, idle_w=10.0,
                      launch_s=2e-6, flop_eff=1.0, bw_eff=1.0, irregular_eff=0.5,
                      source=f"measured now: GEMM {gemm_flops / 1e9:.1f} GFLOP/s, copy {copy_bw / 1e9:.1f} GB/s "
                             f"with {threads} torch thread(s) on the {kind}. ASSUMED: 65 W active, 10 W idle, 2 µs per op")


_FIELDS = {f.name: f for f in fields(DeviceSpec)}


def spec_from_dict(data: Any, where: str) -> DeviceSpec:
    """A spec from a built-in name, or a mapping with all fields (or "base": NAME plus overrides)."""
    if isinstance(data, str):
        if data not in BUILTIN:
            raise InputError(f"{where}: unknown device '{data}'.", "built-in specs: " + ", ".join(BUILTIN))
        return BUILTIN[data]
    if not isinstance(data, dict):
        raise InputError(f"{where}: a device spec must be a built-in name or an object, not {type(data).__name__}.")
    unknown = sorted(set(data) - set(_FIELDS) - {"base"})
    if unknown:
        raise InputError(f"{where}: unknown field(s) {', '.join(unknown)}.", "fields: " + ", ".join(_FIELDS))
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key in ("base", "name", "kind", "source"):
            if not isinstance(value, str):
                raise InputError(f"{where}: '{key}' must be a string.")
            values[key] = value
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise InputError(f"{where}: '{key}' must be a finite number ≥ 0, got {value!r}.")
        values[key] = float(value)
    for key in ("peak_flops", "mem_bw", "flop_eff", "bw_eff", "irregular_eff", "link_bw"):
        if key in values and values[key] <= 0:
            raise InputError(f"{where}: '{key}' must be > 0.")
    for key in ("flop_eff", "bw_eff", "irregular_eff"):
        if key in values and values[key] > 1:
            raise InputError(f"{where}: '{key}' is a fraction of the peak and must be ≤ 1, got {values[key]:g}.")
    base = values.pop("base", None)
    if base is not None:
        if base not in BUILTIN:
            raise InputError(f"{where}: unknown base '{base}'.", "built-in specs: " + ", ".join(BUILTIN))
        return replace(BUILTIN[base], **{"name": f"{base} (custom)", **values})
    missing = [n for n in ("name", "kind", "peak_flops", "mem_bw", "active_w", "idle_w", "launch_s") if n not in values]
    if missing:
        raise InputError(f"{where}: missing field(s) {', '.join(missing)}.", 'or give "base": "MI210" / "A100" / "U55C"')
    if values["kind"] not in DEVICES:
        raise InputError(f"{where}: kind must be one of {', '.join(DEVICES)}, not '{values['kind']}'.")
    return DeviceSpec(**values)


def load_specs(path: str | None) -> dict[str, DeviceSpec]:
    """{"gpu": spec, "fpga": spec} from a JSON file ``{"gpu": NAME|{...}, "fpga": NAME|{...}}``;
    defaults MI210 + U55C (the paper's pair)."""
    specs = {"gpu": BUILTIN["MI210"], "fpga": BUILTIN["U55C"]}
    if path is None:
        return specs
    p = Path(path)
    if not p.is_file():
        raise InputError(f"spec file not found: {path}")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot parse spec file {path}: {exc}",
                         'expected {"gpu": "A100" | {...}, "fpga": "U55C" | {...}}') from exc
    if not isinstance(data, dict) or not data or set(data) - {"gpu", "fpga"}:
        raise InputError(f"spec file {path} must be an object with keys 'gpu' and/or 'fpga'.",
                         'e.g. {"gpu": "A100", "fpga": {"base": "U55C", "active_w": 75}}')
    for role, value in data.items():
        spec = spec_from_dict(value, f"{path} [{role}]")
        if spec.kind != role:
            raise InputError(f"{path} [{role}]: the spec '{spec.name}' is a {spec.kind}, not a {role}.")
        specs[role] = spec
    return specs
