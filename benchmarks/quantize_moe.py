"""Benchmark of `mlx26 quantize-moe`: base alone vs base+LQER vs base+TileQ, and fused vs loop latency.

Usage:  python benchmarks/quantize_moe.py [--json] [--bits 2 --bits 3] [--lqer-rank 8] [--threads 1]
                                          [--only tiny|upcycled|synthetic|latency|int4|decode] [--repeats 41]

A full run (no --only) records results/quantize_moe.json; ``--only upcycled`` (1b, 1c and the drift curve)
records results/quantize_moe_upcycled.json and ``--only decode`` (4b) results/quantize_moe_decode.json.

Each comparison side by side in one process (TileQ is OUR RECONSTRUCTION of Gu et al., ICML 2026; see
docs/quantize-moe.md):
1. tiny-moe (zoo, trained locally; 16 KB stdlib-code calibration; perplexity on the whole held-out split,
   ~124 k tokens, with paired standard errors of the ln-ppl differences over chunks of 8 windows): for
   each bit width, RTN alone, RTN+LQER (rank R per expert) and RTN+TileQ at the same extra memory
   (``--match-memory lqer:R``: P=Q=1 index groups, P=Q=2 activation groups, and the default search
   over P, Q ∈ {1, 2, 4, E}): activation-weighted error (RMS over the 4 projections), its ratio to
   LQER, the extra-memory ratio, and perplexity. Then, at equal error: the smallest TileQ memory
   reaching LQER's error (P=Q=1 with one rank for all projections; and per projection over the
   (P, Q) grid). Then the evidence for why: the principal-angle overlap of the experts' top-R
   residual subspaces (mean cos², left/output and right/input side) against random subspaces (R/m, R/n).
1b. tiny-moe-upcycled (zoo: sparse-upcycled from tiny-llama-draft, then trained; its experts share structure
   the way real upcycled MoEs do): the same equal-memory comparison (RTN, LQER r=R, TileQ P=Q=1 and searched
   at LQER's memory with index and with activation groups), with the experts' spread (mean ‖W_e − W̄‖/‖W̄‖)
   and paired Δln ppl vs LQER. Then the drift curve: tiny-moe-upcycled retrained for longer and at a higher
   learning rate (DRIFT_RUNS), its spread, bits/byte and TileQ / LQER error at each point.
1c. tiny-moe-fine (zoo: 32 fine-grained experts of width 24, top-8, upcycled from tiny-llama-draft's MLP
   segments, then trained): the same comparison, with RTN groups of 8 (64 does not divide the width 24);
   spread from the mean of each segment's copies.
2. SYNTHETIC layers (E=8, 256×128, 4 outlier input channels ×20, upcycled experts W0 + ε·Δ_e):
   the same two comparisons for ε ∈ {0, 0.01, 1}.
3. Latency of one experts forward (the "tileq" forward = single pass, or the loop below T·k = E; the single
   pass alone; the loop over experts), T ∈ {1, 8, 32, 256, 1024}, in fp32 and in bf16 (weights, activations
   and factors, both paths alike), E=16, H=128, D=192, top-2: base only, LQER (r=8) and TileQ (P=Q=1,
   r=32); medians of ``--repeats`` interleaved runs; "gemm floor" = the single pass's two grouped base
   GEMMs alone (no gather, activation, scatter or correction), the arithmetic both paths must do.
4. The int4 runtime (``--runtime int4``: packed 4-bit codes through torch's int4 CPU kernel, bf16 activations):
   tiny-moe at 4-bit RTN (group 64) + LQER r=8 — weight bytes the experts hold against fp32, perplexity on the
   held-out split with dequantized fp32 weights and with int4, and layer 0's output error int4 vs dequantized
   against the quantization error itself (dequantized vs full precision); then one experts forward
   (the synthetic E=16, H=128, D=192, top-2 module, same quantization) for T in {1, 8, 32, 256, 1024}: int4
   against the fp32 fused and loop paths, interleaved (4b, ``--only decode``: the same on a layer of
   Mixtral-8x7B's expert shape / 4, whose weights do not fit in cache, at T = 1, 4, 8, 32; and the weight
   layout: the base grouped GEMM on a transposed view of (E, out, in) vs a contiguous (E, in, out) copy). Then ``--export``: tiny-moe at 4-bit symmetric RTN
   (no correction) written as a compressed-tensors checkpoint, loaded back by transformers alone
   (``AutoModelForCausalLM.from_pretrained``), its logits and perplexity against ours (fp32 and int4 runtimes).
The anchors are in the same process; ratios are the figures (absolute times on a shared machine are noise).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch
from _results import record
from mlx26.core.quantize_moe.evaluate import chunks_ppl as _ppl  # pooled perplexity of chunked NLLs
from mlx26.core.quantize_moe.evaluate import paired_delta as _paired  # paired Δln ppl ± its standard error

FINE = "tiny-moe-fine"
# Mixtral-8x7B's expert shape / 4 (E = 8, H = 1024, I = 2816): 277 MB of fp32 expert weights, 69 MB read per
# token at top-2 — far beyond the caches, so a decode step is bound by memory traffic, where weight-only int4 pays.
DECODE_SHAPE = (8, 1024, 2816)
DECODE_TOKENS = (1, 4, 8, 32)
# (peak lr, steps) of the drift curve: the shipped recipe trained longer, and the hotter first recipe (lr 3e-3)
DRIFT_RUNS = ((1e-3, 500), (1e-3, 1000), (3e-3, 500))
_TINY_KEYS = {"fp": "fp", "rtn": "rtn", "rtn+lqer": "lqer", "rtn+tileq(P=Q=1)": "tileq_pq1",
              "rtn+tileq(P=Q=2,act)": "tileq_pq2_act", "rtn+tileq(search)": "tileq_search",
              "tileq(P=Q=1) at LQER's error": "equal_error_shared_rank",
              "tileq(grid, per projection) at LQER's error": "equal_error_per_projection"}


def _figures(rows: list[dict]) -> dict:
    """The rows keyed for the claims ledger: tiny.<bits>bit.<method>, synthetic.<eps>, latency.T<T>.<variant>."""
    out: dict = {"tiny": {}, "synthetic": {}, "latency": {}, "int4": {}}
    for row in rows:
        if row["section"] == "drift":
            out.setdefault("drift", {})[f"lr{row['lr']:.0e}_steps{row['steps']}"] = row  # e.g. lr1e-03_steps500
        elif row["section"] == "upcycled":
            key = "fp" if row["method"] == "fp" else f"{row['bits']}bit"
            target = out.setdefault("fine" if row["model"] == FINE else "upcycled", {})
            if key == "fp":
                target["fp"] = row
            else:
                target.setdefault(key, {})[row["method"]] = row
        elif row["section"] == "layout":
            out.setdefault("layout", {})[f"{row['dtype']}_T{row['tokens']}"] = row
        elif row["section"] == "int4" and row["model"] == "synthetic-large":
            out.setdefault("decode", {})[f"T{row['tokens']}"] = row
        elif row["section"] == "int4":
            out["int4"]["tiny" if row["model"] == "tiny-moe" else f"T{row['tokens']}"] = row
        elif row["section"] == "export":
            out["export"] = row
        elif row["section"] == "tiny-moe":
            name = row["method"].split("(r=")[0] if row["method"].startswith("rtn+lqer") else row["method"]
            if name == "per projection":
                key = f"{row['module']}.{row['projection']}".replace(".", "_")
                out["tiny"].setdefault(f"{row['bits']}bit", {}).setdefault("per_projection", {})[key] = row
            elif name == "fp":
                out["tiny"]["fp"] = row
            else:
                out["tiny"].setdefault(f"{row['bits']}bit", {})[_TINY_KEYS[name]] = row
        elif row["section"] == "SYNTHETIC":
            out["synthetic"][{0.0: "identical", 0.01: "eps_0_01", 1.0: "independent"}[row["upcycle_eps"]]] = row
        elif row["section"] == "latency":
            variant = {"base only": "base", "lqer r=8": "lqer", "tileq P=Q=1 r=32": "tileq"}[row["variant"]]
            section = "latency" if row["dtype"] == "float32" else f"latency_{row['dtype']}"
            out.setdefault(section, {}).setdefault(f"T{row['tokens']}", {})[variant] = row
    return out


def _rms(values: list[float]) -> float:
    return (sum(v * v for v in values) / len(values)) ** 0.5


def _window_nll(trials) -> list[tuple[float, int]]:
    """(Σ NLL, tokens) per chunk of 8 consecutive 128-token windows of the held-out text (for paired errors)."""
    from mlx26.core.quantize_moe import evaluate, run

    return evaluate.chunk_nll(trials.model, trials.eval_ids, trials.tokenizer.bos_token_id, run.CONTEXT)


def _trial(trials, cfg) -> tuple[list[dict], list[tuple[float, int]]]:
    from mlx26.core.quantize_moe import pipeline

    results = pipeline.quantize_layers(trials.experts, trials.stats, cfg)
    pipeline.apply(trials.experts, results)
    trials.model.set_experts_implementation("tileq")
    chunks = _window_nll(trials)
    trials.restore()
    return [res[p].record for res in results for p in pipeline.PROJECTIONS], chunks


def tiny_moe(bits_list: list[int], R: int, eval_bytes: int) -> list[dict]:
    from mlx26.core.quantize_moe import pipeline, run

    trials = run.Trials("tiny-moe", run.default_text("train", 16384), run.default_text("heldout", eval_bytes))
    fp = _window_nll(trials)
    rows = [{"section": "tiny-moe", "method": "fp", "ppl": _ppl(fp), "eval_tokens": sum(c for _, c in fp)}]
    for bits in bits_list:
        configs = {
            "rtn": pipeline.Config(bits=bits, lowrank="none", rank=R),
            f"rtn+lqer(r={R})": pipeline.Config(bits=bits, lowrank="lqer", rank=R),
            "rtn+tileq(P=Q=1)": pipeline.Config(bits=bits, lowrank="tileq", match_lqer_rank=R, rows=1, cols=1),
            "rtn+tileq(P=Q=2,act)": pipeline.Config(bits=bits, lowrank="tileq", match_lqer_rank=R, rows=2, cols=2,
                                                    cluster="activation"),
            "rtn+tileq(search)": pipeline.Config(bits=bits, lowrank="tileq", match_lqer_rank=R),
        }
        out, nll = {}, {}
        for name, cfg in configs.items():
            recs, nll[name] = _trial(trials, cfg)
            out[name] = {"section": "tiny-moe", "bits": bits, "method": name, "ppl": _ppl(nll[name]),
                         "err": _rms([r["err_lowrank"] for r in recs]),
                         "extra_bytes": sum(r["extra_bytes"] for r in recs),
                         "lqer_bytes": sum(r["lqer_bytes"] for r in recs),
                         "ranks": sorted({r["rank"] for r in recs}),
                         "PQ": sorted({(r["rows"], r["cols"]) for r in recs}) if "rows" in recs[0] else None}
        for name in configs:  # paired ln-ppl differences vs LQER and vs RTN alone (± standard error)
            for ref_name, key in ((f"rtn+lqer(r={R})", "dlnppl_vs_lqer"), ("rtn", "dlnppl_vs_rtn")):
                if name != ref_name:
                    out[name][key] = "{:+.5f}±{:.5f}".format(*_paired(nll[name], nll[ref_name]))
            out[name]["dlnppl_vs_fp"] = "{:+.5f}±{:.5f}".format(*_paired(nll[name], fp))
        ref = out[f"rtn+lqer(r={R})"]
        for row in out.values():
            row["err_vs_lqer"] = row["err"] / ref["err"]
            row["err_vs_base"] = row["err"] / out["rtn"]["err"]
            row["mem_vs_lqer"] = row["extra_bytes"] / ref["extra_bytes"]
        rows.extend(out.values())
        rows.append(_equal_error_tiny(trials, bits, R, ref))
        rows.extend(_per_projection(trials, bits, R))
    return rows


def _spread(trials, segments: int) -> list[float]:
    """Per projection, the experts' mean relative distance ‖W_e − W̄‖/‖W̄‖ from the mean of their copy set.

    The copy set of expert e is every expert upcycled from the same MLP segment (e mod ``segments``): all
    experts for sparse upcycling, the four copies of one segment for the fine-grained model."""
    from mlx26.core.quantize_moe import pipeline

    out = []
    for _, module in trials.experts:
        for p in pipeline.PROJECTIONS:
            W = getattr(module, p).detach()
            d = []
            for g in range(segments):
                copies = W[g::segments]
                mean = copies.mean(0, keepdim=True)
                d += ((copies - mean).flatten(1).norm(dim=1) / mean.flatten().norm()).tolist()
            out.append(sum(d) / len(d))
    return out


def _configs(bits: int, R: int, g: int) -> dict:
    from mlx26.core.quantize_moe import pipeline

    return {"rtn": pipeline.Config(bits=bits, lowrank="none", rank=R, group_size=g),
            "lqer": pipeline.Config(bits=bits, lowrank="lqer", rank=R, group_size=g),
            "tileq_pq1": pipeline.Config(bits=bits, lowrank="tileq", match_lqer_rank=R, rows=1, cols=1, group_size=g),
            "tileq_search": pipeline.Config(bits=bits, lowrank="tileq", match_lqer_rank=R, group_size=g),
            "tileq_search_act": pipeline.Config(bits=bits, lowrank="tileq", match_lqer_rank=R, group_size=g,
                                                cluster="activation")}


def upcycled(bits_list: list[int], R: int, eval_bytes: int, model: str = "tiny-moe-upcycled",
             group_size: int = 64) -> list[dict]:
    """The equal-memory comparison on a zoo upcycled MoE, with the experts' spread within their copy sets."""
    from mlx26.core.quantize_moe import run
    from mlx26.core.zoo import read_manifest

    trials = run.Trials(model, run.default_text("train", 16384), run.default_text("heldout", eval_bytes))
    manifest = read_manifest(model)
    segments = manifest["upcycled_from"].get("segments", 1)
    spread = _spread(trials, segments)
    fp = _window_nll(trials)
    rows = [{"section": "upcycled", "model": model, "method": "fp", "ppl": _ppl(fp),
             "eval_tokens": sum(c for _, c in fp), "expert_spread": sum(spread) / len(spread),
             "expert_spread_per_projection": spread, "segments": segments,
             "bits_per_byte": manifest["eval"]["bits_per_byte"], "training": {
                 k: manifest["training"][k] for k in ("steps", "lr")},
             "source_bits_per_byte": read_manifest(manifest["upcycled_from"]["model"])["eval"]["bits_per_byte"]}]
    for bits in bits_list:
        g = group_size
        configs = _configs(bits, R, g)
        out, nll = {}, {}
        for name, cfg in configs.items():
            recs, nll[name] = _trial(trials, cfg)
            out[name] = {"section": "upcycled", "model": model, "bits": bits, "group_size": g, "method": name,
                         "cluster": cfg.cluster, "ppl": _ppl(nll[name]),
                         "err": _rms([r["err_lowrank"] for r in recs]),
                         "extra_bytes": sum(r["extra_bytes"] for r in recs),
                         "ranks": sorted({r["rank"] for r in recs}),
                         "PQ": sorted({(r["rows"], r["cols"]) for r in recs}) if "rows" in recs[0] else None}
        for name in configs:
            if name != "lqer":
                out[name]["dlnppl_vs_lqer"], out[name]["dlnppl_vs_lqer_se"] = _paired(nll[name], nll["lqer"])
            out[name]["err_vs_lqer"] = out[name]["err"] / out["lqer"]["err"]
            out[name]["mem_vs_lqer"] = out[name]["extra_bytes"] / out["lqer"]["extra_bytes"] if name != "rtn" else 0.0
        rows.extend(out.values())
    return rows


def drift(bits_list: list[int], R: int) -> list[dict]:
    """TileQ / LQER as the upcycled experts drift apart: tiny-moe-upcycled retrained for longer / hotter.

    Each point is a fresh `zoo train tiny-moe-upcycled --steps S --lr LR --seed 0` (the shipped model is the
    first point of the curve, in the upcycled rows); errors at LQER r=R's memory, index and activation
    groups, on the same 16 KB calibration text."""
    import tempfile

    from mlx26.core.quantize_moe import run
    from mlx26.core.zoo import train as zoo_train

    rows = []
    for lr, steps in DRIFT_RUNS:
        with tempfile.TemporaryDirectory() as tmp:
            manifest = zoo_train.train(zoo_train.TrainOptions(preset="tiny-moe-upcycled", out=f"{tmp}/m",
                                                              steps=steps, lr=lr, seed=0, force=True))
            trials = run.Trials(f"{tmp}/m", run.default_text("train", 16384))
            spread = _spread(trials, 1)
            row = {"section": "drift", "model": "tiny-moe-upcycled", "lr": lr, "steps": steps,
                   "bits_per_byte": manifest["eval"]["bits_per_byte"], "expert_spread": sum(spread) / len(spread)}
            for bits in bits_list:
                recs = {name: trials.trial(cfg, ppl=False)[0] for name, cfg in _configs(bits, R, 64).items()
                        if name in ("lqer", "tileq_search", "tileq_search_act")}
                err = {name: _rms([r["err_lowrank"] for r in rs]) for name, rs in recs.items()}
                mem = {name: sum(r["extra_bytes"] for r in rs) for name, rs in recs.items()}
                row[f"{bits}bit"] = {"tileq_search_vs_lqer": err["tileq_search"] / err["lqer"],
                                     "tileq_search_act_vs_lqer": err["tileq_search_act"] / err["lqer"],
                                     "tileq_search_mem_vs_lqer": mem["tileq_search"] / mem["lqer"],
                                     "tileq_search_act_mem_vs_lqer": mem["tileq_search_act"] / mem["lqer"]}
            rows.append(row)
    return rows


def _per_projection(trials, bits: int, R: int) -> list[dict]:
    """Per projection: TileQ's least memory over the (P, Q) grid reaching LQER's error, and subspace overlap."""
    from mlx26.core.quantize_moe import cluster, lowrank, pipeline, quant

    rows, mem_t, mem_l = [], 0, 0
    for (name, module), st in zip(trials.experts, trials.stats, strict=True):
        for proj in pipeline.PROJECTIONS:
            W = getattr(module, proj).detach().float()
            E, m, n = W.shape
            stats = st.projections[proj]
            Wq = quant.rtn(W, bits, 64).dequantize()
            Res = W - Wq
            s = lowrank.activation_scale(stats.abs_sum, stats.count)
            M = Res.double() * s[:, None, :]
            target = lowrank.weighted_error(W, Wq + lowrank.fit_lqer(Res, s, R).rounded(torch.float16).delta(), s)

            def err(P: int, Q: int, r: int, W=W, Wq=Wq, Res=Res, s=s, E=E, stats=stats) -> float:
                g_rows, g_cols = cluster.index_groups(E, P), cluster.index_groups(E, Q)
                f = lowrank.fit_tileq(Res, stats.abs_sum, stats.count, g_rows, g_cols, r).rounded(torch.float16)
                return lowrank.weighted_error(W, Wq + f.delta(), s)

            best = None
            for P, Q in lowrank.search_grid(E):
                lo, hi = 1, min(m, n)
                if err(P, Q, hi) > target * (1 + 1e-4):
                    continue
                while lo < hi:
                    mid = (lo + hi) // 2
                    lo, hi = (lo, mid) if err(P, Q, mid) <= target * (1 + 1e-4) else (mid + 1, hi)
                vals = lowrank.tileq_values(P, Q, E, m, n, lo)
                if best is None or vals < best[0]:
                    best = (vals, P, Q, lo)
            assert best is not None  # P = Q = E at rank R is L2QER itself
            left, right = cluster.subspace_overlap(M, R)
            # oracle: the input side shared at zero cost, the whole budget spent on per-expert output
            # sides (rank budget / (E·m) each, own top singular vectors) — an upper bound for any
            # factorisation that shares only the input side, as error / LQER's (Eckart–Young tails)
            sv2 = torch.linalg.svdvals(M) ** 2
            r_free = lowrank.lqer_values(E, m, n, R) // (E * m)
            oracle = (float(sv2[:, r_free:].sum()) / float(sv2[:, R:].sum())) ** 0.5
            mem_t, mem_l = mem_t + best[0], mem_l + lowrank.lqer_values(E, m, n, R)
            rows.append({"section": "tiny-moe", "bits": bits, "method": "per projection", "module": name,
                         "projection": proj, "err_lqer": target, "tileq_PQr_at_lqer_error": best[1:],
                         "lqer_over_tileq_memory": lowrank.lqer_values(E, m, n, R) / best[0],
                         "overlap_left": left, "random_left": R / m, "overlap_right": right, "random_right": R / n,
                         "oracle_free_input_side_err_vs_lqer": oracle})
    rows.append({"section": "tiny-moe", "bits": bits, "method": "tileq(grid, per projection) at LQER's error",
                 "lqer_over_tileq_memory": mem_l / mem_t})
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


def latency(repeats: int) -> list[dict]:
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
    def gemm_floor(module, x, idx, w) -> None:  # the two grouped base GEMMs alone
        flat = idx.reshape(-1)
        order = torch.argsort(flat, stable=True)
        offs = kern._segments(flat[order], E)
        g = kern._gmm(x.index_select(0, order // idx.shape[1]), module.gate_up_proj.transpose(1, 2), offs)
        kern._gmm(g[:, :D].contiguous(), module.down_proj.transpose(1, 2), offs)

    rows = []
    fns = {"fused": kern.fused_experts_forward, "single": kern.single_pass_forward, "loop": kern.loop_experts_forward,
           "floor": gemm_floor}
    for dtype in (torch.float32, torch.bfloat16):
        module.to(dtype)
        for T in (1, 8, 32, 256, 1024):
            x, idx, w = syn.routing(T, E, 2, H, seed=T)
            x, w = x.to(dtype), w.to(dtype)
            for name, f in variants.items():
                module.tileq_factors = f
                with torch.inference_mode():
                    diff = float((kern.single_pass_forward(module, x, idx, w)
                                  - kern.loop_experts_forward(module, x, idx, w)).abs().max())
                t = time_forward(fns, module, x, idx, w, repeats=repeats)
                rows.append({"section": "latency", "dtype": str(dtype).removeprefix("torch."), "tokens": T,
                             "experts": E, "variant": name, "fused_ms": 1e3 * t["fused"],
                             "single_pass_ms": 1e3 * t["single"], "loop_ms": 1e3 * t["loop"],
                             "gemm_floor_ms": 1e3 * t["floor"], "fused_over_loop": t["fused"] / t["loop"],
                             "single_pass_over_loop": t["single"] / t["loop"], "floor_over_loop": t["floor"] / t["loop"],
                             "fell_back_to_loop": T * 2 < E, "max_abs_diff": diff})
            # What the compensation itself costs on top of the base experts (the paper's latency claim
            # compares low-rank paths): each variant minus "base only", per path, and TileQ's fused
            # correction against per-expert LQER's looped one (the baseline it is meant to replace).
            at_T = {row["variant"]: row for row in rows if row["tokens"] == T and row["dtype"] == rows[-1]["dtype"]}
            base = at_T["base only"]
            for row in at_T.values():
                if row is not base:
                    row["correction_fused_ms"] = row["fused_ms"] - base["fused_ms"]
                    row["correction_loop_ms"] = row["loop_ms"] - base["loop_ms"]
            lqer_loop = at_T["lqer r=8"]["correction_loop_ms"]
            for row in at_T.values():
                if row is not base and lqer_loop > 0:
                    row["correction_fused_over_lqer_loop"] = row["correction_fused_ms"] / lqer_loop
    module.to(torch.float32)
    return rows


def int4(repeats: int, eval_bytes: int) -> list[dict]:
    from mlx26.core.quantize_moe import pipeline
    from mlx26.core.quantize_moe import run as qrun
    from mlx26.kernels import quantize_moe as kern
    from mlx26.kernels import quantize_moe_int4 as k4

    proj = pipeline.PROJECTIONS
    trials = qrun.Trials("tiny-moe", qrun.default_text("train", 16384), qrun.default_text("heldout", eval_bytes))
    ppl_fp = trials.perplexity()
    results = pipeline.quantize_layers(trials.experts, trials.stats, pipeline.Config(
        bits=4, group_size=64, base="rtn", lowrank="lqer", rank=8))
    pipeline.apply(trials.experts, results)
    trials.model.set_experts_implementation("tileq")
    st, (_, mod) = trials.stats[0], trials.experts[0]
    x, idx, w = st.inputs[:1024], st.top_k_index[:1024].long(), st.top_k_weights[:1024]
    with torch.inference_mode():
        deq = kern.loop_experts_forward(mod, x, idx, w)
        quantized = {p: getattr(mod, p).detach().clone() for p in proj}
        factors, mod.tileq_factors = mod.tileq_factors, {}
        for p in proj:
            getattr(mod, p).data.copy_(trials.fp[0][p])
        full = kern.loop_experts_forward(mod, x, idx, w)
        for p in proj:
            getattr(mod, p).data.copy_(quantized[p])
        mod.tileq_factors = factors
    ppl_deq = trials.perplexity()
    sizes = pipeline.to_int4(trials.experts, [{p: r[p].quantized for p in proj} for r in results])
    trials.model.set_experts_implementation("tileq_int4")
    with torch.inference_mode():
        out4 = k4.int4_experts_forward(mod, x, idx, w)
    ppl_int4 = trials.perplexity()
    rms = lambda t: float(t.pow(2).mean().sqrt())  # noqa: E731
    rows = [{"section": "int4", "model": "tiny-moe", "bits": 4, "group_size": 64, "lowrank": "lqer r=8", **sizes,
             "int4_over_fp32_codes_only": sizes["resident_int4_bytes"] / sizes["fp32_expert_bytes"],
             "ppl_fp": ppl_fp, "ppl_dequantized": ppl_deq, "ppl_int4": ppl_int4,
             "ppl_int4_over_dequantized": ppl_int4 / ppl_deq, "eval_tokens": len(trials.eval_ids),
             "rms_int4_vs_dequantized": rms(out4 - deq), "rms_dequantized_vs_fp": rms(deq - full),
             "int4_error_over_quantization_error": rms(out4 - deq) / rms(deq - full),
             "max_abs_int4_vs_dequantized": float((out4 - deq).abs().max())}]
    rows += _int4_timing(16, 128, 192, (1, 8, 32, 256, 1024), repeats, "synthetic")
    rows.append(export_row(trials))
    return rows


def _int4_timing(E: int, H: int, D: int, tokens: tuple[int, ...], repeats: int, label: str) -> list[dict]:
    """One experts forward, int4 (4-bit RTN g=64 codes, LQER r=8 factors) against fp32 fused and loop."""
    from mlx26.core.quantize_moe import lowrank, pipeline, quant
    from mlx26.core.quantize_moe import synthetic as syn
    from mlx26.core.quantize_moe.evaluate import time_forward
    from mlx26.kernels import quantize_moe as kern
    from mlx26.kernels import quantize_moe_int4 as k4

    proj = pipeline.PROJECTIONS
    fp_mod = syn.experts_module(E, H, D)
    gen = torch.Generator().manual_seed(0)
    lq = {p: lowrank.Factors(0.01 * torch.randn(E, m, 8, generator=gen), 0.01 * torch.randn(E, 8, n, generator=gen),
                             None, torch.arange(E), torch.arange(E))
          for p, (m, n) in (("gate_up_proj", (2 * D, H)), ("down_proj", (H, D)))}
    codes = {p: quant.rtn(getattr(fp_mod, p).detach(), 4, 64) for p in proj}
    with torch.no_grad():
        for p in proj:
            getattr(fp_mod, p).data.copy_(codes[p].dequantize())
    fp_mod.tileq_factors = lq
    i4_mod = syn.experts_module(E, H, D)
    k4.attach(i4_mod, {p: k4.pack(c.codes, c.scale, c.zero, 4, 64, p) for p, c in codes.items()})
    i4_mod.tileq_factors = lq
    fns = {"fused": lambda _m, *a: kern.fused_experts_forward(fp_mod, *a),
           "loop": lambda _m, *a: kern.loop_experts_forward(fp_mod, *a),
           "int4": lambda _m, *a: k4.int4_experts_forward(i4_mod, *a)}
    fp32_bytes = sum(getattr(fp_mod, p).untyped_storage().nbytes() for p in proj)
    rows = []
    for T in tokens:
        x, idx, w = syn.routing(T, E, 2, H, seed=T)
        t = time_forward(fns, None, x, idx, w, repeats=repeats)
        rows.append({"section": "int4", "model": label, "tokens": T, "experts": E, "hidden": H, "intermediate": D,
                     "variant": "lqer r=8", "fp32_weight_bytes": fp32_bytes,
                     "fused_ms": 1e3 * t["fused"], "loop_ms": 1e3 * t["loop"], "int4_ms": 1e3 * t["int4"],
                     "int4_over_fused": t["int4"] / t["fused"], "int4_over_loop": t["int4"] / t["loop"],
                     "int4_over_best_fp32": t["int4"] / min(t["fused"], t["loop"]),
                     "fused_over_loop": t["fused"] / t["loop"]})
    return rows


def layout(repeats: int) -> list[dict]:
    """The fused path's base GEMM on transformers' (E, out, in) weights read through a transposed view (what the
    kernel does) against a contiguous (E, in, out) copy, fp32 and bf16, on the latency section's layer."""
    import torch.nn.functional as F
    from mlx26.core.quantize_moe.evaluate import time_forward

    E, H, D = 16, 128, 192
    rows = []
    for dtype in (torch.float32, torch.bfloat16):
        gen = torch.Generator().manual_seed(0)
        W = torch.randn(E, 2 * D, H, generator=gen).to(dtype)  # gate_up_proj as transformers stores it
        view, contiguous = W.transpose(1, 2), W.transpose(1, 2).contiguous()
        for T in (256, 1024):
            N = 2 * T  # top-2 assignments, spread evenly over the experts
            x = torch.randn(N, H, generator=gen).to(dtype)
            offs = torch.tensor([(e + 1) * N // E for e in range(E)], dtype=torch.int32)
            t = time_forward({name: lambda _m, a, *_, g=w, o=offs: F.grouped_mm(a, g, offs=o)
                              for name, w in (("view", view), ("contiguous", contiguous))},
                             None, x, None, None, repeats=repeats)
            rows.append({"section": "layout", "dtype": str(dtype).replace("torch.", ""), "tokens": T,
                         "experts": E, "view_ms": 1e3 * t["view"], "contiguous_ms": 1e3 * t["contiguous"],
                         "contiguous_over_view": t["contiguous"] / t["view"]})
    return rows


def decode(repeats: int) -> list[dict]:
    """int4 vs fp32 at decode sizes on a layer whose weights do not fit in cache (the memory-bound regime)."""
    return _int4_timing(*DECODE_SHAPE, DECODE_TOKENS, repeats, "synthetic-large")


def export_row(trials) -> dict:
    import tempfile

    from mlx26.core.quantize_moe import pipeline, storage
    from mlx26.core.quantize_moe import run as qrun
    from transformers import AutoModelForCausalLM

    cfg = pipeline.Config(bits=4, group_size=64, lowrank="none", symmetric=True)
    ids = torch.tensor([trials.eval_ids[:128]])
    with tempfile.TemporaryDirectory() as tmp:
        summary = qrun.run("tiny-moe", cfg, qrun.default_text("train", 16384), out=f"{tmp}/ours",
                           export_to=f"{tmp}/ct")[-1]
        theirs = AutoModelForCausalLM.from_pretrained(f"{tmp}/ct")
        fp32, _ = storage.load(f"{tmp}/ours", "fp32")
        int4_model, _ = storage.load(f"{tmp}/ours", "int4")
        with torch.inference_mode():
            got, ref, ref4 = (m(ids).logits for m in (theirs, fp32, int4_model))
        ppl = {}
        for name, m in (("transformers", theirs), ("ours_fp32", fp32), ("ours_int4", int4_model)):
            trials.model = m
            ppl[name] = trials.perplexity()
    scale = float(ref.abs().max())
    return {"section": "export", "model": "tiny-moe", "format": summary["export_format"],
            "bits": 4, "symmetric": True, "group_size": 64, "export_bytes": summary["export_bytes"],
            "export_projections": summary["export_projections"], "logits_tokens": int(ids.shape[1]),
            "max_abs_logit_diff_vs_ours_fp32": float((got - ref).abs().max()),
            "max_abs_logit_diff_vs_ours_int4": float((got - ref4).abs().max()), "logit_scale": scale,
            "ppl_transformers": ppl["transformers"], "ppl_ours_fp32": ppl["ours_fp32"],
            "ppl_ours_int4": ppl["ours_int4"], "eval_tokens": len(trials.eval_ids)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--bits", type=int, action="append")
    parser.add_argument("--lqer-rank", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=41)
    parser.add_argument("--eval-bytes", type=int, default=1 << 20, help="held-out bytes (default: all 420 KB)")
    parser.add_argument("--only", choices=("tiny", "upcycled", "synthetic", "latency", "int4", "decode"),
                        help="one section; 'upcycled' and 'decode' are not part of a full run and record "
                             "results/quantize_moe_upcycled.json and results/quantize_moe_decode.json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    rows = []
    if args.only in (None, "tiny"):
        rows += tiny_moe(args.bits or [2, 3], args.lqer_rank, args.eval_bytes)
    if args.only == "upcycled":
        rows += upcycled(args.bits or [2, 3], args.lqer_rank, args.eval_bytes)
        # group 8: the largest RTN group dividing both of its input dimensions (64 and the experts' width 24)
        rows += upcycled(args.bits or [2, 3], args.lqer_rank, args.eval_bytes, model=FINE, group_size=8)
        rows += drift(args.bits or [2, 3], args.lqer_rank)
        fig = _figures(rows)
        record("quantize_moe_upcycled", {"upcycled": fig["upcycled"], "fine": fig["fine"], "drift": fig["drift"],
                                         "torch_threads": torch.get_num_threads()},
               data=[{"name": "tiny-moe-upcycled / tiny-moe-fine", "source": "zoo models upcycled from "
                      "tiny-llama-draft (8 experts top-2; 32 fine-grained experts top-8) and trained locally on "
                      "stdlib code; calibration: first 16 KB of the train split, perplexity on the whole held-out "
                      "split"}, {"name": "drift", "source": "tiny-moe-upcycled retrained here for longer / at a "
                                 "higher learning rate (seed 0)"}])
    if args.only in (None, "synthetic"):
        rows += synthetic(args.lqer_rank)
    if args.only in (None, "latency"):
        rows += latency(args.repeats)
    if args.only in (None, "int4"):
        rows += int4(args.repeats, args.eval_bytes)
    if args.only == "decode":
        rows += decode(args.repeats) + layout(args.repeats)
        fig = _figures(rows)
        record("quantize_moe_decode", {**fig["decode"], "layout": fig["layout"],
                                       "torch_threads": torch.get_num_threads()},
               data=[{"name": "synthetic-large", "source": "generated experts layer (E=8, H=1024, I=2816, top-2, seed 0), "
                      "4-bit RTN codes of its weights, random routing"},
                     {"name": "layout", "source": "generated gate_up_proj weights (E=16, 384x128) and activations"}])
    header = {"cores": os.cpu_count(), "torch_threads": torch.get_num_threads(), "seconds": time.perf_counter() - t0}
    if args.only is None:  # the full run's claims rows need every one of its sections
        record("quantize_moe", {**_figures(rows), "torch_threads": header["torch_threads"],
                                "seconds": header["seconds"]},
               data=[{"name": "tiny-moe", "source": "zoo tiny-moe (1.8 M parameters, trained locally on stdlib code; "
                      "calibration: first 16 KB of its train split, perplexity on its whole held-out split)"},
                     {"name": "synthetic", "source": "generated MoE layers (E=8, 256x128, 4 outlier channels x20, "
                      "upcycled experts W0 + eps*D_e, seed 0) and random routing for the latency rows"}])
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
