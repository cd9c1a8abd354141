"""Benchmark of `mlx26 profile-memory`: how the memory-processing stages grow with the context.

Usage:  python benchmarks/profile_memory.py [--contexts 2048 4096 8192 16384 32752] [--steps 4]
                                            [--budget 1024] [--json]

On the zoo's tiny-llama-long (RANDOM INIT, d512 × 4 layers, 32k positions) on this CPU, for each
context: one dense prefill of the context (reported, not in the shares), then the same number
of decode steps through Quest, the DSA-style indexer and the anchor — plain dense decode
attention over the whole cache — from the same cache; RAG and the HMT-style memory pipeline run
on the same context. Printed per pipeline: ms per decode step of each stage, the
memory-processing share, the decode-step time relative to the dense anchor (Quest/indexer), and
the MODELLED MI210-only vs MI210+U55C speedup. The largest context is 32768 − steps so that the
decode fits in the 32k positions. Machine ceilings (GEMM, copy) are measured first.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from _results import record

DEFAULT_CONTEXTS = (2048, 4096, 8192, 16384, 32752)


def _decode(runner, pipe, first, steps):
    from mlx26.core.profile_memory.clock import LapClock
    from mlx26.core.profile_memory.costs import MEMORY_STAGES, CostBook
    from mlx26.core.profile_memory.profiler import _decode_loop

    clock, costs = LapClock(), CostBook()
    t0 = time.perf_counter()
    clock.start()
    pipe.build(clock, costs)
    _decode_loop(runner, pipe.attend, first, steps, clock, costs)
    e2e = time.perf_counter() - t0
    times = dict(clock.times)
    return {"e2e_s": e2e, "times": times, "costs": costs,
            "share": sum(times.get(s, 0.0) for s in MEMORY_STAGES) / e2e}


def run(contexts, steps: int, budget: int) -> dict:
    import torch
    from mlx26.core.common.threads import apply_torch_threads
    from mlx26.core.profile_memory import ceilings
    from mlx26.core.profile_memory.dense import DensePipeline
    from mlx26.core.profile_memory.devices import BUILTIN
    from mlx26.core.profile_memory.indexer import IndexerPipeline
    from mlx26.core.profile_memory.ops import TorchOps
    from mlx26.core.profile_memory.placement import plan
    from mlx26.core.profile_memory.profiler import ProfileOptions, profile
    from mlx26.core.profile_memory.quest import QuestPipeline
    from mlx26.core.profile_memory.runner import LlamaRunner
    from mlx26.core.zoo import load_model

    threads = apply_torch_threads(torch)
    model = load_model("tiny-llama-long")
    ceil = ceilings.measure("cpu")
    ops = TorchOps()
    rows = []
    for n in contexts:
        ids = torch.randint(0, model.config.vocab_size, (n,), generator=torch.Generator().manual_seed(0))
        runner = LlamaRunner(model, n + steps)
        indexer = IndexerPipeline(runner, budget, ops)
        t0 = time.perf_counter()
        logits, _ = runner.prefill(ids, capture=indexer.capture)
        prefill_s = time.perf_counter() - t0
        first = int(torch.argmax(logits))
        results = {}
        for name, pipe in (("quest", QuestPipeline(runner, budget, ops)), ("indexer", indexer),
                           ("dense (anchor)", DensePipeline(runner))):
            runner.length = n  # every pipeline decodes from the same prefilled cache
            results[name] = _decode(runner, pipe, first, steps)
        for name in ("rag", "memory"):
            r = profile(ProfileOptions(pipeline=name, model="tiny-llama-long", context=n, decode_steps=steps,
                                       budget=budget), model, ops)
            results[name] = {"e2e_s": r["end_to_end_s"], "times": r["stages"], "costs": r["costs"],
                             "share": r["memory_share"]}
        dense_step = results["dense (anchor)"]["e2e_s"] / steps
        for name, r in results.items():
            p = plan(r["costs"].stages, BUILTIN["MI210"], BUILTIN["U55C"], "auto", True)
            row = {"context": n, "pipeline": name, "prefill_s": round(prefill_s, 3),
                   **{f"{s}_ms": round(1e3 * r["times"].get(s, 0.0) / steps, 3)
                      for s in ("prepare", "relevancy", "retrieval", "apply", "other")},
                   "e2e_ms_per_step": round(1e3 * r["e2e_s"] / steps, 3),
                   "memory_share": round(r["share"], 4),
                   "modelled_speedup": round(p["speedup"], 3), "modelled_energy": round(p["energy_ratio"], 3)}
            if name in ("quest", "indexer", "dense (anchor)"):
                row["step_vs_dense"] = round(r["e2e_s"] / steps / dense_step, 3)
            rows.append(row)
        print(f"context {n}: prefill {prefill_s:.1f} s", file=sys.stderr, flush=True)
    return {"cores": os.cpu_count(), "torch_threads": threads, "gemm_gflops": ceil["gemm_flops"] / 1e9,
            "copy_gbs": ceil["copy_bw"] / 1e9, "steps": steps, "budget": budget, "model": "tiny-llama-long (random init)",
            "rows": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--contexts", type=int, nargs="+", default=list(DEFAULT_CONTEXTS))
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--budget", type=int, default=1024)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    out = run(args.contexts, args.steps, args.budget)
    by_context: dict = {}
    for row in out["rows"]:
        by_context.setdefault(f"c{row['context']}", {})[row["pipeline"].split(" ")[0]] = row
    record("profile_memory", {"contexts": args.contexts, "shortest": f"c{min(args.contexts)}",
                              "longest": f"c{max(args.contexts)}", "by_context": by_context,
                              "shortest_context": by_context[f"c{min(args.contexts)}"],
                              "longest_context": by_context[f"c{max(args.contexts)}"],
                              **{k: out[k] for k in ("torch_threads", "gemm_gflops", "copy_gbs", "steps", "budget",
                                                     "model")}},
           data=[{"name": "random token ids", "source": "SYNTHETIC: seeded random token ids (seed 0) as the context"},
                 {"name": "tiny-llama-long", "source": "zoo tiny-llama-long, RANDOM INIT (timing only; "
                  "its outputs are meaningless)"}])
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"profile-memory benchmark — {out['model']}, CPU, {out['cores']} cores, {out['torch_threads']} torch "
          f"thread(s); ceilings GEMM {out['gemm_gflops']:.1f} GFLOP/s, copy {out['copy_gbs']:.1f} GB/s; "
          f"{out['steps']} decode steps, budget {out['budget']} tokens")
    print("anchor: dense decode attention over the whole cache (step_vs_dense = step time / anchor's); "
          "modelled_* = MI210-only vs MI210+U55C, MODELLED (not measured)")
    cols = ["context", "pipeline", "prepare_ms", "relevancy_ms", "retrieval_ms", "apply_ms", "other_ms",
            "e2e_ms_per_step", "memory_share", "step_vs_dense", "modelled_speedup", "modelled_energy"]
    print(" | ".join(cols))
    for row in out["rows"]:
        print(" | ".join(str(row.get(c, "")) for c in cols))
    print("prefill_s per context: " + ", ".join(f"{r['context']}: {r['prefill_s']}" for r in out["rows"]
                                                 if r["pipeline"] == "quest"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
