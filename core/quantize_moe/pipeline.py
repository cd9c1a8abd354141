"""Quantize every fused MoE experts module of a model: base quantizer + optional low-rank compensation.

Part of our reconstruction of TileQ (Gu, Chen, Hu, Liu, ICML 2026, arXiv 2605.09281) on top of
LQER/L2QER; see :mod:`.lowrank` for what is reconstructed. For each layer and projection type
(``gate_up_proj`` (E, 2I, H), ``down_proj`` (E, H, I)) it quantizes the experts (RTN / GPTQ /
HQQ), fits the correction (LQER per expert, or TileQ shared tiles) on the residual, and returns
one record with the activation-weighted errors and the extra memory. :func:`apply` writes the
dequantized weights and the factors into the model and selects the fused ``"tileq"`` forward.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import torch
from mlx26.core.common.errors import InputError
from mlx26.core.quantize_moe import cluster, lowrank, quant
from mlx26.core.quantize_moe.calibrate import LayerStats
from mlx26.core.quantize_moe.spec import BASES, CLUSTERS, LOWRANKS

PROJECTIONS = ("gate_up_proj", "down_proj")


@dataclass
class Config:
    bits: int = 4
    group_size: int = 64
    base: str = "rtn"
    lowrank: str = "tileq"
    rank: int = 8
    rows: int | None = None  # P; None → 1 for tileq
    cols: int | None = None  # Q; None → 1 for tileq
    cluster: str = "index"
    match_lqer_rank: int | None = None  # --match-memory lqer:R
    rounds: int = 3
    factor_bytes: int = 2  # float16 storage
    seed: int = 0
    symmetric: bool = False  # zero point at the middle code (the layout compressed-tensors / GPTQ checkpoints use)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ProjResult:
    quantized: quant.Quantized
    factors: lowrank.Factors | None
    record: dict[str, Any]


def validate(cfg: Config, shapes: list[tuple[int, int, int]]) -> None:
    """Check every option against every projection shape (E, m, n) before any work."""
    if cfg.base not in BASES:
        raise InputError(f"unknown --base '{cfg.base}'.", "choose one of: " + ", ".join(BASES))
    if cfg.lowrank not in LOWRANKS:
        raise InputError(f"unknown --lowrank '{cfg.lowrank}'.", "choose one of: " + ", ".join(LOWRANKS))
    if cfg.cluster not in CLUSTERS:
        raise InputError(f"unknown --cluster '{cfg.cluster}'.", "choose one of: " + ", ".join(CLUSTERS))
    if cfg.rounds < 1:
        raise InputError(f"rounds must be ≥ 1, got {cfg.rounds}.")
    if cfg.symmetric and cfg.base == "hqq":
        raise InputError("--symmetric applies to --base rtn and gptq (HQQ fits its own zero points).")
    for E, m, n in shapes:
        quant.check_bits_group(cfg.bits, cfg.group_size, n, f"a {m}×{n} expert projection")
        if cfg.lowrank == "none":
            continue
        if cfg.match_lqer_rank is None and not 1 <= cfg.rank <= min(m, n):
            raise InputError(f"--rank must be in [1, {min(m, n)}] for a {m}×{n} expert projection, got {cfg.rank}.")
        if cfg.match_lqer_rank is not None and not 1 <= cfg.match_lqer_rank <= min(m, n):
            raise InputError(f"--match-memory lqer:R needs R in [1, {min(m, n)}], got {cfg.match_lqer_rank}.")
        for name, G in (("--rows", cfg.rows), ("--cols", cfg.cols)):
            if G is not None and not 1 <= G <= E:
                raise InputError(f"{name} must be in [1, {E}] (the number of experts), got {G}.")
        if cfg.lowrank == "tileq" and cfg.match_lqer_rank is not None and not searches(cfg):
            lowrank.match_rank(E, m, n, cfg.match_lqer_rank, cfg.rows or 1, cfg.cols or 1)


def quantize_projection(W: torch.Tensor, stats: Any, cfg: Config) -> ProjResult:
    """Base quantization + correction of one projection's stacked expert weights (E, m, n)."""
    E, m, n = W.shape
    q = quant.quantize(W, cfg.base, cfg.bits, cfg.group_size, stats.hessians if cfg.base == "gptq" else None,
                       cfg.symmetric)
    Wq = q.dequantize()
    R = W.float() - Wq
    s = lowrank.activation_scale(stats.abs_sum, stats.count)
    ref_rank = cfg.match_lqer_rank if cfg.match_lqer_rank is not None else cfg.rank
    rec: dict[str, Any] = {"experts": E, "m": m, "n": n, "bits": cfg.bits, "group_size": cfg.group_size,
                           "base": cfg.base, "lowrank": cfg.lowrank,
                           "err_base": lowrank.weighted_error(W, Wq, s), "base_bytes": q.storage_bytes()}
    dtype = torch.float16 if cfg.factor_bytes == 2 else torch.float32
    factors = None
    if cfg.lowrank == "none":
        rec.update(rank=0, err_lowrank=rec["err_base"], extra_bytes=0)
    elif cfg.lowrank == "lqer":
        factors = lowrank.fit_lqer(R, s, ref_rank).rounded(dtype)
        rec.update(rank=ref_rank, extra_bytes=lowrank.lqer_values(E, m, n, ref_rank) * cfg.factor_bytes)
    else:
        P, Q, r, rows, cols, factors, tried = _fit_tileq(W, Wq, R, s, stats, cfg, dtype)
        rec.update(rank=r, rows=P, cols=Q, cluster=cfg.cluster, row_groups=rows.tolist(), col_groups=cols.tolist(),
                   extra_bytes=lowrank.tileq_values(P, Q, E, m, n, r) * cfg.factor_bytes, searched=tried)
    if factors is not None:
        rec["err_lowrank"] = lowrank.weighted_error(W, Wq + factors.delta(), s)
        assert factors.values() * cfg.factor_bytes == rec["extra_bytes"]
    lqer_bytes = lowrank.lqer_values(E, m, n, ref_rank) * cfg.factor_bytes
    rec["lqer_rank"] = ref_rank
    rec["lqer_bytes"] = lqer_bytes
    rec["extra_ratio_vs_lqer"] = rec["extra_bytes"] / lqer_bytes
    if cfg.lowrank == "tileq":  # the per-expert baseline at the reference rank, for the ratio
        ref = lowrank.fit_lqer(R, s, ref_rank).rounded(dtype)
        rec["err_lqer"] = lowrank.weighted_error(W, Wq + ref.delta(), s)
        rec["err_ratio_vs_lqer"] = rec["err_lowrank"] / rec["err_lqer"] if rec["err_lqer"] > 0 else None
    return ProjResult(q, factors, rec)


def searches(cfg: Config) -> bool:
    """``--match-memory`` without ``--rows/--cols`` searches (P, Q) at that memory (see :func:`_fit_tileq`)."""
    return cfg.lowrank == "tileq" and cfg.match_lqer_rank is not None and cfg.rows is None and cfg.cols is None


def _fit_tileq(W: torch.Tensor, Wq: torch.Tensor, R: torch.Tensor, s: torch.Tensor, stats: Any, cfg: Config,
               dtype: torch.dtype) -> tuple[int, int, int, torch.Tensor, torch.Tensor, lowrank.Factors, int]:
    """TileQ at the given (P, Q, rank), or — for :func:`searches` — the (P, Q) of :func:`lowrank.search_grid`
    at LQER's memory with the lowest calibration-weighted error (the fit's own objective, measured on the
    float16 factors; no held-out data). P = Q = E is per-expert L2QER, so the search is never worse than it."""
    E, m, n = W.shape
    M = R.double() * s[:, None, :]
    grid = lowrank.search_grid(E) if searches(cfg) else [(cfg.rows or 1, cfg.cols or 1)]
    best: tuple[float, int, int, int, torch.Tensor, torch.Tensor, lowrank.Factors] | None = None
    tried = 0
    for P, Q in grid:
        if cfg.match_lqer_rank is None:
            r = cfg.rank
        elif len(grid) > 1 and lowrank.tileq_values(P, Q, E, m, n, 1) > lowrank.lqer_values(E, m, n,
                                                                                             cfg.match_lqer_rank):
            continue  # no rank fits this (P, Q)
        else:
            r = lowrank.match_rank(E, m, n, cfg.match_lqer_rank, P, Q)
        rows, cols = cluster.assign(cfg.cluster, M, P, Q, r, cfg.seed)
        f = lowrank.fit_tileq(R, stats.abs_sum, stats.count, rows, cols, r, cfg.rounds).rounded(dtype)
        err = lowrank.weighted_error(W, Wq + f.delta(), s) if len(grid) > 1 else 0.0
        tried += 1
        if best is None or err < best[0]:
            best = (err, P, Q, r, rows, cols, f)
    assert best is not None
    return (*best[1:], tried)  # type: ignore[return-value]


def quantize_layers(experts: list[tuple[str, Any]], stats: list[LayerStats], cfg: Config,
                    progress: Callable[[str], None] = lambda _m: None) -> list[dict[str, ProjResult]]:
    out = []
    for layer, ((name, module), st) in enumerate(zip(experts, stats, strict=True)):
        results = {}
        for proj in PROJECTIONS:
            progress(f"{name}.{proj}")
            res = quantize_projection(getattr(module, proj).detach().float(), st.projections[proj], cfg)
            res.record = {"layer": layer, "module": name, "projection": proj, **res.record,
                          "routed_tokens": st.routed.tolist()}
            results[proj] = res
        out.append(results)
    return out


def to_int4(experts: list[tuple[str, Any]], quantized: list[dict[str, Any]]) -> dict[str, Any]:
    """Replace the experts' fp32 base weights by packed int4 codes (the ``tileq_int4`` forward); factors stay.

    ``quantized`` holds, per experts module, each projection's :class:`.quant.Quantized`. Returns what the
    experts now hold, counted from their tensors: int4 codes and scales, correction factors, and the ratio
    of both together to the fp32 weights they replace."""
    from mlx26.kernels import quantize_moe_int4 as k4

    k4.register()
    for (name, module), q in zip(experts, quantized, strict=True):
        k4.attach(module, {p: k4.pack(q[p].codes, q[p].scale, q[p].zero, q[p].bits, q[p].group_size, f"{name}.{p}")
                           for p in PROJECTIONS})
    sizes = [k4.resident_bytes(m) for _, m in experts]
    total = {k: sum(s[k] for s in sizes) for k in sizes[0]}
    held = total["int4_bytes"] + total["factor_bytes"]
    return {"resident_expert_bytes": held, "resident_int4_bytes": total["int4_bytes"],
            "resident_factor_bytes": total["factor_bytes"], "fp32_expert_bytes": total["fp32_bytes"],
            "resident_over_fp32": held / total["fp32_bytes"]}


def apply(experts: list[tuple[str, Any]], results: list[dict[str, ProjResult]]) -> None:
    """Write dequantized base weights and factors into the experts modules and select the fused forward."""
    from mlx26.kernels import quantize_moe as kern

    kern.register()
    for (_, module), res in zip(experts, results, strict=True):
        with torch.no_grad():
            for proj in PROJECTIONS:
                getattr(module, proj).data.copy_(res[proj].quantized.dequantize())
        module.tileq_factors = {proj: res[proj].factors for proj in PROJECTIONS}
