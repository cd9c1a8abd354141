"""Omni-fMRI benchmark (arXiv 2601.23090): dynamic vs uniform vs random patching, side by side, one run.

    python benchmarks/fmri.py [--steps 200] [--seeds 0 1 2] [--json out.json]      # make bench-fmri

SYNTHETIC data only (mlx26.core.fmri.synth). Part 1, per seed (new data and init) at 32^3 (6 subjects x 48
frames, 8-frame clips): tokens per clip, the tokeniser's reconstruction SSE (random = same token count as
dynamic), MAE pretraining CPU time, held-out masked-reconstruction MSE vs the mean predictor, linear-probe
balanced accuracy (pretrained vs random init) for subject identity (held-out clips) and task/rest (held-out
subjects); mean +- sd over seeds. Part 2: pretraining CPU time dynamic vs uniform on larger clips (64^3), in
this process, interleaved, several rounds, at the paper's tau (--timing-tau 0.25 0.5 adds the public visualiser's).
Part 3, the matched configuration: at 64^3 (4 subjects x 32 frames, the last subject held out), per seed and per
tau (the paper's 0.25 and the public code's 0.5), dynamic and uniform pretrained in turn (order alternating by
seed): token ratio, training CPU-time ratio and held-out MAE MSE ratio from the same runs.
Ratios against uniform (the anchor).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from _results import record


def _pm(s: dict, key: str, fmt: str = ".3f") -> str:
    return f"{s[key]:{fmt}} ± {s[key + '_sd']:{fmt}}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--subjects", type=int, default=6)
    ap.add_argument("--frames", type=int, default=48)
    ap.add_argument("--timing-size", type=int, default=64)
    ap.add_argument("--timing-steps", type=int, default=10)
    ap.add_argument("--timing-repeats", type=int, default=6)
    ap.add_argument("--timing-tau", type=float, nargs="+", default=[0.25])
    ap.add_argument("--matched-size", type=int, default=64)
    ap.add_argument("--matched-tau", type=float, nargs="+", default=[0.25, 0.5])
    ap.add_argument("--matched-steps", type=int, default=60)
    ap.add_argument("--matched-seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--json", help="also write the records to this JSON file")
    args = ap.parse_args(argv)
    import torch
    from mlx26.core.fmri import bench

    torch.set_num_threads(1)  # a shared 2-core machine: one thread keeps the runs comparable
    log = lambda m: print(f"  {m}", file=sys.stderr, flush=True)  # noqa: E731
    t0 = time.perf_counter()
    recs = bench.compare(steps=args.steps, seeds=tuple(args.seeds), subjects=args.subjects, frames=args.frames,
                         log=log)
    summ = bench.summarise(recs)
    print(f"fmri benchmark — SYNTHETIC data, {recs[0]['clips']} clips of {recs[0]['size']}^3 per seed, "
          f"{args.steps} steps, seeds {args.seeds}, {os.cpu_count()} cores, torch threads 1")
    cols = ["tokens_per_clip", "reconstruction_sse", "train_cpu_seconds", "mae_mse", "mean_predictor_mse",
            "probe_subject_pretrained", "probe_subject_random_init", "probe_condition_pretrained",
            "probe_condition_random_init"]
    short = ["tokens/clip", "tokenizer_SSE", "train_cpu_s", "MAE_MSE", "mean_pred_MSE", "subj_pretrain",
             "subj_random", "cond_pretrain", "cond_random"]
    print("patching (mean over seeds)  " + "  ".join(f"{c:>13}" for c in short))
    for name in ("dynamic", "uniform", "random"):
        print(f"{name:27} " + "  ".join(f"{summ[name][c]:>13.4g}" for c in cols))
    d, r = summ["dynamic"], summ["random"]
    print("ratios (SYNTHETIC; mean ± sd over seeds):")
    print(f"  dynamic / uniform tokens        {_pm(d, 'token_ratio')}   (claim <= 0.85)")
    sse = [a["reconstruction_sse"] / b["reconstruction_sse"] for a, b in
           zip([x for x in recs if x["patching"] == "dynamic"], [x for x in recs if x["patching"] == "random"], strict=True)]
    print(f"  dynamic / random tokeniser SSE  {sum(sse) / len(sse):.3f}   (equal token count; claim < 0.5)")
    print(f"  dynamic / uniform MAE MSE       {_pm(d, 'mae_ratio')}   (claim <= 1.10; same voxels)")
    print(f"  random  / uniform MAE MSE       {_pm(r, 'mae_ratio')}")
    print(f"  dynamic / uniform train CPU     {_pm(d, 'time_ratio')}   (sequential runs at {recs[0]['size']}^3)")
    for name in ("dynamic", "uniform", "random"):
        s = summ[name]
        print(f"  {name:8} MAE MSE / mean predictor {s['mae_mse'] / s['mean_predictor_mse']:.3f}; probe gain "
              f"subject {_pm(s, 'probe_subject_gain_points', '+.1f')} pts, task-vs-rest "
              f"{_pm(s, 'probe_condition_gain_points', '+.1f')} pts (claim >= +10; chance "
              f"{s['probe_condition_chance']:.2f})")
    timings = []
    for tau in args.timing_tau:
        t = bench.timing(size=args.timing_size, steps=args.timing_steps, repeats=args.timing_repeats, tau=tau, log=log)
        timings.append(t)
        print(f"timing {t['size']}^3 (SYNTHETIC, {t['clips']} clips, tau {tau}): tokens {t['tokens_dynamic']:.0f} vs "
              f"{t['tokens_uniform']:.0f} (ratio {t['token_ratio']:.3f}); train CPU dynamic/uniform median "
              f"{t['time_ratio_median']:.3f}, per round {t['time_ratio_mean']:.3f} ± {t['time_ratio_sd']:.3f}, "
              f"dynamic faster in {t['rounds_dynamic_faster']}/{t['repeats']} rounds")
    matched = []  # a list (claim rows address matched.<i>.<field>; a tau key would carry a dot)
    for tau in args.matched_tau:
        runs = []
        for k, seed in enumerate(args.matched_seeds):  # alternate the order so a drifting load hits both alike
            order = ("dynamic", "uniform") if k % 2 == 0 else ("uniform", "dynamic")
            runs += bench.compare(size=args.matched_size, subjects=4, frames=32, steps=args.matched_steps, tau=tau,
                                  seeds=(seed,), labels=(), patchings=order, log=log)
        m = bench.summarise(runs)["dynamic"]
        m.update(tau=tau, size=args.matched_size, steps=args.matched_steps, clips=runs[0]["clips"],
                 uniform_mae_mse=bench.summarise(runs)["uniform"]["mae_mse"])
        matched.append(m)
        print(f"matched {args.matched_size}^3 (SYNTHETIC, {m['clips']} clips, {args.matched_steps} steps, tau {tau:g}, "
              f"{m['seeds']} seeds): tokens {_pm(m, 'token_ratio')}, train CPU {_pm(m, 'time_ratio')}, "
              f"MAE MSE {_pm(m, 'mae_ratio')} x uniform; MAE {m['mae_mse']:.4f} vs mean predictor "
              f"{m['mean_predictor_mse']:.4f}")
    print(f"total {time.perf_counter() - t0:.0f} s")
    record("fmri", {"summary": summ, "tokeniser_sse_dynamic_over_random": sum(sse) / len(sse),
                    "tokeniser_sse_dynamic_over_random_per_seed": sse, "timing": timings,
                    "matched": matched,
                    "timing_by_tau": {f"{t['tau']:g}": t for t in timings} if all("tau" in t for t in timings) else None,
                    "size": recs[0]["size"], "clips": recs[0]["clips"],
                    **{k: getattr(args, k) for k in ("steps", "seeds", "subjects", "frames", "timing_size",
                                                      "timing_steps", "timing_repeats", "timing_tau", "matched_size",
                                                      "matched_tau", "matched_steps", "matched_seeds")}},
           data=[{"name": "synthetic fMRI", "source": f"SYNTHETIC: mlx26.core.fmri.synth brains, {args.subjects} subjects x "
                  f"{args.frames} frames at {recs[0]['size']}^3 per seed (seeds {args.seeds}); {args.timing_size}^3 clips "
                  f"for the timing part; 4 subjects x 32 frames at {args.matched_size}^3 for the matched part"}])
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": recs, "summary": summ, "timing": timings}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
