"""Benchmark of `mlx26 quantize-moe`: base alone vs base+LQER vs base+TileQ, and fused vs loop latency.

Usage:  python benchmarks/quantize_moe.py [--json] [--bits 2 --bits 3] [--lqer-rank 8] [--threads 1]

In one run, side by side (TileQ is OUR RECONSTRUCTION of Gu et al., ICML 2026; see docs/quantize-moe.md):
1. tiny-moe (zoo, trained locally; 16 KB stdlib-code calibration, 16 KB held-out perplexity): for
   each bit width, RTN alone, RTN+LQER (rank R per expert) and RTN+TileQ at the same extra memory
   (``--match-memory lqer:R``; P=Q=1 index groups and P=Q=2 activation groups): activation-weighted
   error (RMS over the 4 projections), its ratio to LQER, the extra-memory ratio, and perplexity.
   Then, at equal error: the smallest TileQ (P=Q=1) memory reaching LQER's error (binary search on rank).
2. SYNTHETIC layers (E=8, 256×128, 4 outlier input channels ×20, upcycled experts W0 + ε·Δ_e):
   the same two comparisons for ε ∈ {0, 0.01, 1}.
3. Latency of one experts forward (fused single pass vs loop over experts), T ∈ {256, 1024}, E=16,
   H=128, D=192, top-2: base only, LQER (r=8) and TileQ (P=Q=1, r=32); medians of 15 interleaved runs.
The anchors are in the same process; ratios are the figures (absolute times on a shared machine are noise).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch


def _rms(values: list[float]) -> float:
    return (sum(v * v for v in values) / len(values)) ** 0.5


def tiny_moe(bits_list: list[int], R: int) -> list[dict]:
    from mlx26.core.quantize_moe import pipeline, run

    trials = run.Trials("tiny-moe", run.default_text("train", 16384), run.default_text("heldout", 16384))
    rows = [{"section": "tiny-moe", "method": "fp", "ppl": trials.perplexity()}]
    for bits in bits_list:
        configs = {
            "rtn": pipeline.Config(bits=bits, lowrank="none", rank=R),
            f"rtn+lqer(r={R})": pipeline.Config(bits=bits, lowrank="lqer", rank=R),
            "rtn+tileq(P=Q=1)": pipeline.Config(bits=bits, lowrank="tileq", match_lqer_rank=R),
            "rtn+tileq(P=Q=2,act)": pipeline.Config(bits=bits, lowrank="tileq", match_lqer_rank=R, rows=2, cols=2,
                                                    cluster="activation"),
        }
        out = {}
        for name, cfg in configs.items():
            recs, ppl = trials.trial(cfg)
            out[name] = {"section": "tiny-moe", "bits": bits, "method": name, "ppl": ppl,
                         "err": _rms([r["err_lowrank"] for r in recs]),
                         "extra_bytes": sum(r["extra_bytes"] for r in recs),
                         "lqer_bytes": sum(r["lqer_bytes"] for r in recs),
                         "ranks": sorted({r["rank"] for r in recs})}
        ref = out[f"rtn+lqer(r={R})"]
        for row in out.values():
            row["err_vs_lqer"] = row["err"] / ref["err"]
            row["err_vs_base"] = row["err"] / out["rtn"]["err"]
            row["mem_vs_lqer"] = row["extra_bytes"] / ref["extra_bytes"]
        rows.extend(out.values())
        rows.append(_equal_error_tiny(trials, bits, R, ref))
    return rows


def _equal_error_tiny(trials, bits: int, R: int, ref: dict) -> dict:
    from mlx26.core.quantize_moe import pipeline

    def err(r: int) -> tuple[float, int]:
        recs, _ = trials.trial(pipeline.Config(bits=bits, lowrank="tileq", rank=r), ppl=False)
        return _rms([x["err_lowrank"] for x in recs]), sum(x["extra_bytes"] for x in recs)

    lo, hi = 1, 128
    if err(hi)[0] > ref["err"]:
        return {"section": "tiny-moe", "bits": bits, "method": "tileq(P=Q=1) at LQER's error",
                "note": f"not reached up to rank {hi}"}
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if err(mid)[0] <= ref["err"] else (mid + 1, hi)
    e, mem = err(lo)
    return {"section": "tiny-moe", "bits": bits, "method": "tileq(P=Q=1) at LQER's error", "rank": lo, "err": e,
            "extra_bytes": mem, "lqer_over_tileq_memory": ref["extra_bytes"] / mem}


def synthetic(R: int) -> list[dict]:
    from mlx26.core.quantize_moe import lowrank, quant
    from mlx26.core.quantize_moe import synthetic as syn

    rows = []
    for eps in (0.0, 0.01, 1.0):
        L = syn.layer(E=8, m=256, n=128, T=2048, outliers=4, outlier_scale=20.0, upcycle=eps, seed=0)
        E, m, n = L.W.shape
        Wq = quant.rtn(L.W, 3, 64).dequantize()
        Res = L.W - Wq
        s = lowrank.activation_scale(L.stats.abs_sum, L.stats.count)
        one = torch.zeros(E, dtype=torch.long)
        e_base = lowrank.weighted_error(L.W, Wq, s)
        e_lqer = lowrank.weighted_error(L.W, Wq + lowrank.fit_lqer(Res, s, R).delta(), s)

        def tile(r: int, L=L, Wq=Wq, Res=Res, s=s, one=one) -> float:
            f = lowrank.fit_tileq(Res, L.stats.abs_sum, L.stats.count, one, one, r)
            return lowrank.weighted_error(L.W, Wq + f.delta(), s)

        r_eq = lowrank.match_rank(E, m, n, R, 1, 1)
        e_tile = tile(r_eq)
        lo, hi = 1, min(m, n)
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if tile(mid) <= e_lqer else (mid + 1, hi)
        rows.append({"section": "SYNTHETIC", "upcycle_eps": eps, "bits": 3, "err_base": e_base,
                     f"err_lqer_r{R}": e_lqer, "tileq_rank_equal_memory": r_eq, "err_tileq_equal_memory": e_tile,
                     "err_vs_lqer": e_tile / e_lqer, "tileq_rank_equal_error": lo,
                     "lqer_over_tileq_memory_at_equal_error": lowrank.lqer_values(E, m, n, R)
                     / lowrank.tileq_values(1, 1, E, m, n, lo)})
    return rows


def latency() -> list[dict]:
    from mlx26.core.quantize_moe import lowrank
    from mlx26.core.quantize_moe import synthetic as syn
    from mlx26.core.quantize_moe.evaluate import time_forward
    from mlx26.kernels import quantize_moe as kern

    E, H, D = 16, 128, 192
    module = syn.experts_module(E, H, D)
    gen = torch.Generator().manual_seed(0)

    def factors(m: int, n: int, r: int, shared: bool) -> lowrank.Factors:
        P = 1 if shared else E
        ids = torch.zeros(E, dtype=torch.long) if shared else torch.arange(E)
        return lowrank.Factors(0.01 * torch.randn(P, m, r, generator=gen), 0.01 * torch.randn(P, r, n, generator=gen),
                               torch.randn(E, r, r, generator=gen) if shared else None, ids, ids.clone())

    variants = {"base only": {}, "lqer r=8": {"gate_up_proj": factors(2 * D, H, 8, False),
                                              "down_proj": factors(H, D, 8, False)},
                "tileq P=Q=1 r=32": {"gate_up_proj": factors(2 * D, H, 32, True),
                                     "down_proj": factors(H, D, 32, True)}}
    rows = []
    for T in (256, 1024):
        x, idx, w = syn.routing(T, E, 2, H, seed=T)
        for name, f in variants.items():
            module.tileq_factors = f
            with torch.inference_mode():
                diff = float((kern.fused_experts_forward(module, x, idx, w)
                              - kern.loop_experts_forward(module, x, idx, w)).abs().max())
            t = time_forward({"fused": kern.fused_experts_forward, "loop": kern.loop_experts_forward}, module, x,
                             idx, w, repeats=15)
            rows.append({"section": "latency", "tokens": T, "experts": E, "variant": name,
                         "fused_ms": 1e3 * t["fused"], "loop_ms": 1e3 * t["loop"],
                         "fused_over_loop": t["fused"] / t["loop"], "max_abs_diff": diff})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--bits", type=int, action="append")
    parser.add_argument("--lqer-rank", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    rows = tiny_moe(args.bits or [2, 3], args.lqer_rank) + synthetic(args.lqer_rank) + latency()
    header = {"cores": os.cpu_count(), "torch_threads": torch.get_num_threads(), "seconds": time.perf_counter() - t0}
    if args.json:
        print(json.dumps({"machine": header, "rows": rows}, indent=2))
        return
    print(f"quantize-moe benchmark — {header['cores']} cores, torch threads {header['torch_threads']}; "
          "TileQ = our reconstruction; tiny-moe is a tiny locally trained model")
    for row in rows:
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
    print(f"total {header['seconds']:.0f} s")


if __name__ == "__main__":
    main()
