"""SPEED-Bench benchmark (arXiv 2604.09557): three engines vs plain decoding, and a server concurrency sweep.

    python benchmarks/spec_bench.py [--prompts ../shared/data/spec-bench/question.jsonl] [--out DIR]   # make bench-spec-bench

Part 1 (anchor: plain greedy decoding of the same target, same process): the Qualitative split (diversity
selection per category: MiniLM when installed, else TF-IDF) decoded by ours (draft model + KV cache),
transformers' assisted generation and prompt lookup; AL, greedy match, tokens/s, wall speedup (CPU-specific)
and modelled speedup tau / (1 + k c_draft / c_target). Part 2: the Throughput split at 128/256/512 input tokens,
real entropy tiers vs SYNTHETIC random tokens (the overestimation finding), 256 new tokens, plus a 32-token
contrast at 256 input tokens, each with a bootstrap interval over prompts, on tiny-llama-1k (trained on
1,024-token windows, so no position is past its training context), and the prompt-lookup rows again on
tiny-llama (trained on 128-token windows: every position past 128 is extrapolation) as a contrast; our
engine's row there drafts with tiny-llama-draft-1k. Part 3: `mlx26 llm serve` started as a
separate process, with --draft at each k and without (the plain anchor), swept over concurrency 1..16
(streaming, httpx): throughput ratio spec / plain per level and AL scraped from /metrics. Tiny zoo models on
a shared CPU: the figures prove the plumbing; they are not GPU figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _results import record


def _server(draft_k: int | None) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-m", "mlx26.cli.main", "llm", "serve", "--llm", "hf:tiny-llama", "--port", "0", "-q"]
    if draft_k:
        cmd += ["--draft", "tiny-llama-draft", "--draft-k", str(draft_k)]
    # Not from the repository root: `python -m` puts the cwd first on sys.path, and the repository's top-level
    # `kernels/` folder would shadow the `kernels` package that transformers imports (ImportError at start-up).
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=tempfile.gettempdir())
    line = proc.stdout.readline() if proc.stdout else ""
    if not line:
        proc.kill()
        raise SystemExit(f"llm serve did not start: {' '.join(cmd)}")
    return proc, json.loads(line)["base_url"]


def _f(v: object, fmt: str = ".3f") -> str:
    return "null" if v is None else format(v, fmt)


def _throughput(pool: list, models: dict, args: argparse.Namespace, engines: tuple[str, ...]) -> dict:
    """Random-token vs real prompts at each input length (prompt lookup; our draft engine at the middle one)."""
    from mlx26.core.spec_bench import metrics, throughput
    from mlx26.core.spec_bench.prompts import Prompt
    from mlx26.core.spec_bench.run import run

    figures = {"lengths": args.lengths, "tokens": args.throughput_tokens, "short_tokens": args.short_tokens}
    mid = args.lengths[len(args.lengths) // 2]
    runs = ([("prompt-lookup", n, args.throughput_tokens, f"isl{n}") for n in args.lengths]
            + [("prompt-lookup", mid, args.short_tokens, f"isl{mid}_short"), ("ours", mid, args.throughput_tokens, f"isl{mid}")])
    runs = [r for r in runs if r[0] in engines]
    for engine, length, new_tokens, key in runs:
        recs = throughput.build(pool[:: max(1, len(pool) // args.throughput_prompts)], models["tokenizer"], [length],
                                args.random_prompts, seed=args.seed, context=models["context"])
        tp = [Prompt(r["id"], r["tier"], r["prompt"]) for r in recs]
        rep = run(tp, models, engine=engine, k=args.k, max_tokens=new_tokens, ids=[r["input_ids"] for r in recs])
        al = {c["category"]: c["acceptance_length"] for c in rep["by_category"]}
        rows = {"random": [r for r in rep["prompts"] if r["category"] == "random"],
                "real": [r for r in rep["prompts"] if r["category"] != "random"]}
        ci = metrics.al_ratio_interval(rows["random"], rows["real"], seed=args.seed)
        # Real sequences that are one document cut to length (nothing appended): padding repeats a category's template
        single_ids = {r["id"] for r in recs if r["data"] == "pool" and r["appended_prompts"] == 0}
        single = [r for r in rows["real"] if r["id"] in single_ids]
        ci1 = metrics.al_ratio_interval(rows["random"], single, seed=args.seed) if single else {}
        figures.setdefault(engine, {})[key] = {
            "input_tokens": length, "new_tokens": new_tokens, "al_by_tier": al, "real_al": metrics.pooled_al(rows["real"]),
            "random_over_real": ci["ratio"], "ci90": [ci["low"], ci["high"]], "ci90_low": ci["low"], "ci90_high": ci["high"],
            "share_at_most_one": ci["share_at_most_one"], "prompts": {k: len(v) for k, v in rows.items()},
            "single_document": {"prompts": len(single), "al": metrics.pooled_al(single) if single else None,
                                "padded_al": metrics.pooled_al([r for r in rows["real"] if r["id"] not in single_ids]),
                                "random_over_single": ci1.get("ratio"), "ci90_low": ci1.get("low"),
                                "ci90_high": ci1.get("high")}}
        print(f"{engine:<14} in={length:<4} new={new_tokens:<4} "
              + "  ".join(f"{t}={_f(al.get(t))}" for t in ("low", "mixed", "high", "random"))
              + f"  random/real = {_f(ci['ratio'])} [{_f(ci['low'])}, {_f(ci['high'])}] ({len(rows['real'])} real, "
              f"{len(rows['random'])} random); random/single-document real = {_f(ci1.get('ratio'))} "
              f"[{_f(ci1.get('low'))}, {_f(ci1.get('high'))}] ({len(single)} single)")
    pl = [figures["prompt-lookup"][f"isl{n}"] for n in args.lengths]
    figures["prompt-lookup-summary"] = {
        "lengths_above_one": sum(e["ci90_low"] > 1 for e in pl), "lengths_below_one": sum(e["ci90_high"] < 1 for e in pl),
        "ratio_min": min(e["random_over_real"] for e in pl), "ratio_max": max(e["random_over_real"] for e in pl)}
    return figures


def _context_check(roles: dict[str, str]) -> dict:
    """Held-out bits/byte of each target at a 128- and a 1,024-token context: is the long context usable?"""
    from mlx26.core.zoo import load_model, load_tokenizer
    from mlx26.core.zoo.corpora import corpus
    from mlx26.core.zoo.evaluate import bits_per_byte
    from mlx26.core.zoo.registry import trained_context
    from mlx26.core.zoo.train import EVAL_BYTES

    text = corpus("stdlib-code").text("heldout", EVAL_BYTES)
    out: dict = {"corpus": "stdlib-code heldout", "bytes": len(text.encode("utf-8"))}
    print("\n## Context check: held-out stdlib bits/byte (lower is better)")
    for role, name in roles.items():  # keyed by role, so the claims keep their keys when --*-target changes
        model, tok = load_model(name), load_tokenizer(name)
        row = {f"ctx{c}": bits_per_byte(model, tok, text, context=c, routing=False)["bits_per_byte"] for c in (128, 1024)}
        out[role] = row | {"model": name, "trained_context": trained_context(name)}
        print(f"{name:<14} trained on {out[role]['trained_context']}-token windows: context 128 {row['ctx128']:.3f}, "
              f"context 1024 {row['ctx1024']:.3f}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", help="prompt file (default: the embedded pool)")
    ap.add_argument("--per-category", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("-k", type=int, default=4)
    ap.add_argument("--ks", type=int, nargs="+", default=[2, 4], help="draft lengths of the server sweep")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    ap.add_argument("--requests", type=int, default=16)
    ap.add_argument("--sweep-tokens", type=int, default=16)
    ap.add_argument("--lengths", type=int, nargs="+", default=[128, 256, 512],
                    help="input lengths of the Throughput split (prompt lookup at each; our engine at the middle one)")
    ap.add_argument("--throughput-prompts", type=int, default=48, help="real prompts of the Throughput split")
    ap.add_argument("--random-prompts", type=int, default=16, help="SYNTHETIC random-token prompts")
    ap.add_argument("--throughput-tokens", type=int, default=256, help="new tokens per Throughput prompt")
    ap.add_argument("--short-tokens", type=int, default=32,
                    help="a short-output contrast: prompt lookup at the middle length with this many new tokens")
    ap.add_argument("--throughput-target", default="tiny-llama-1k",
                    help="target of the Throughput split (trained on 1,024-token windows, so every position is in range)")
    ap.add_argument("--throughput-draft", default="tiny-llama-draft-1k",
                    help="draft of our engine's Throughput row (tiny-llama-draft continued on 1,024-token windows)")
    ap.add_argument("--contrast-target", default="tiny-llama",
                    help="also run the split's prompt-lookup rows on this target ('' to skip): tiny-llama was "
                         "trained on 128-token windows")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="out/spec-bench/bench")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from mlx26.core.spec_bench import embed, report, select
    from mlx26.core.spec_bench.prompts import embedded_pool, from_records
    from mlx26.core.spec_bench.run import load_pair, run
    from mlx26.core.spec_bench.server_bench import sweep

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.prompts:
        rows = [(i, json.loads(x)) for i, x in enumerate(Path(args.prompts).read_text().splitlines(), 1) if x.strip()]
        pool, source = from_records(rows, args.prompts), "Spec-Bench question.jsonl (real prompts)"
    else:
        pool, source = embedded_pool(), "embedded pool (project text)"
    print(f"# spec-bench benchmark — {source}; tiny-llama target, tiny-llama-draft; {os.cpu_count()} CPU core(s)")
    vectors, used = embed.embed([p.text for p in pool], "auto")
    split, div, _ = select.select_split(pool, vectors, args.per_category, "greedy", 200, args.seed)
    print(f"\n## Qualitative split: {len(split)} prompts ({args.per_category}/category, {used}); "
          f"min beats_random {min((r['beats_random'] for r in div if r['beats_random'] is not None), default=None)}")
    models = load_pair("tiny-llama", "tiny-llama-draft")
    print("engine         AL     accept  greedy  plain tok/s  spec tok/s  wall speedup (CPU)  modelled")
    results = {}
    for engine in ("ours", "hf-assisted", "prompt-lookup"):
        rep = run(split, models, engine=engine, k=args.k, max_tokens=args.max_tokens, seed=args.seed, truncate=256)
        s = rep["summary"]
        results[engine] = rep
        (out / f"run-{engine}.json").write_text(json.dumps(rep))
        print(f"{engine:<14} {_f(s['acceptance_length'])}  {_f(s['acceptance_rate'])}   {str(s['greedy_match']):<6}  "
              f"{_f(s['plain_tokens_per_s'], '.1f'):>11}  {_f(s['spec_tokens_per_s'], '.1f'):>10}  "
              f"{_f(s['wall_speedup_cpu']):>18}  {_f(s['modelled_speedup'])}")
    print(f"c_draft/c_target (measured forward-time ratio) = {_f(results['ours']['summary']['c_draft_over_c_target'])}")
    s = results["ours"]["summary"]
    print(f"{s['prompts_past_trained_context']} of {s['prompts']} prompts (+ {args.max_tokens} new tokens) run past the "
          f"{s['trained_context']} tokens tiny-llama was trained on")

    figures: dict = {"prompts_source": source, "embedder": used, "split": len(split), "per_category": args.per_category,
                     "k": args.k, "max_tokens": args.max_tokens,
                     "diversity": {"min_beats_random": min((r["beats_random"] for r in div if r["beats_random"] is not None),
                                                           default=None),
                                   "categories": len(div),
                                   "by_category": {r["category"]: r["beats_random"] for r in div}},
                     "engines": {e: {k: r["summary"][k] for k in ("acceptance_length", "acceptance_rate", "greedy_match",
                                                                  "wall_speedup_cpu", "modelled_speedup",
                                                                  "c_draft_over_c_target", "prompts", "trained_context",
                                                                  "prompts_past_trained_context")}
                                 | {"al_by_category": {c["category"]: c["acceptance_length"] for c in r["by_category"]}}
                                 for e, r in results.items()}}
    for e in figures["engines"].values():
        als = [v for v in e["al_by_category"].values() if v is not None]
        e["al_category_min"], e["al_category_max"] = (min(als), max(als)) if als else (None, None)
    figures["context_check"] = _context_check({"target": args.throughput_target}
                                              | ({"contrast": args.contrast_target} if args.contrast_target else {}))
    print("\n## Throughput split: real prompts in entropy tiers vs SYNTHETIC random tokens; AL by tier and "
          "random / real with a 90% bootstrap interval over prompts")
    tp_models = load_pair(args.throughput_target, args.throughput_draft)  # carries both trained windows
    print(f"### target {args.throughput_target}, draft {args.throughput_draft} (trained at "
          f"{tp_models['trained_context']} / {tp_models['draft_trained_context']} tokens)")
    figures["throughput"] = _throughput(pool, tp_models, args, engines=("prompt-lookup", "ours"))
    figures["throughput"] |= {"target": args.throughput_target, "draft": args.throughput_draft,
                              "trained_context": tp_models["trained_context"],
                              "draft_trained_context": tp_models["draft_trained_context"]}
    if args.contrast_target:
        contrast = load_pair(args.contrast_target, None)
        print(f"### contrast: target {args.contrast_target} (trained at {contrast['trained_context']} "
              "tokens: positions past that are extrapolation), prompt lookup only")
        figures["throughput_contrast"] = _throughput(pool, contrast, args, engines=("prompt-lookup",))
        figures["throughput_contrast"] |= {"target": args.contrast_target,
                                           "trained_context": contrast["trained_context"]}

    print(f"\n## Server sweep: `mlx26 llm serve` (separate process), {args.requests} streamed requests/level, "
          f"{args.sweep_tokens} tokens each")
    texts = [p.text for p in split]
    sweeps: dict[str, list[dict]] = {}
    for k in [None, *args.ks]:
        proc, url = _server(k)
        try:
            levels = sweep(url, "tiny-llama", texts, args.concurrency, requests=args.requests,
                           max_tokens=args.sweep_tokens)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        for row in levels:
            row["k"] = k
        sweeps["plain" if k is None else f"k={k}"] = levels
        (out / f"sweep-{'plain' if k is None else k}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in levels))
    print("server  conc  tok/s   ratio-to-plain  TTFT med  TPOT med  AL(counters)")
    for name, levels in sweeps.items():
        for row, base in zip(levels, sweeps["plain"], strict=True):
            ratio = row["throughput_tokens_per_s"] / base["throughput_tokens_per_s"]
            print(f"{name:<7} {row['concurrency']:>4}  {_f(row['throughput_tokens_per_s'], '.1f'):>6}  {ratio:>14.3f}  "
                  f"{_f(row['ttft_median_s']):>8}  {_f(row['tpot_median_s'], '.4f'):>8}  {_f(row['acceptance_length'])}")
    figures["sweep"] = {"requests": args.requests, "tokens": args.sweep_tokens, "concurrency": args.concurrency,
                        "servers": {name: [{"concurrency": row["concurrency"],
                                            "tokens_per_s": row["throughput_tokens_per_s"],
                                            "ratio_to_plain": row["throughput_tokens_per_s"] / base["throughput_tokens_per_s"],
                                            "ttft_median_s": row["ttft_median_s"], "acceptance_length": row["acceptance_length"]}
                                           for row, base in zip(levels, sweeps["plain"], strict=True)]
                                    for name, levels in sweeps.items()}}
    drafted = {n: lv for n, lv in sweeps.items() if n != "plain"}
    best = [max(drafted, key=lambda n, i=i: drafted[n][i]["throughput_tokens_per_s"]) for i in range(len(args.concurrency))]
    figures["sweep"] |= {"best_k_by_concurrency": best, "best_k_varies": len(set(best)) > 1,
                         "draft_al_all_present": all(r["acceptance_length"] is not None for lv in drafted.values()
                                                     for r in lv),
                         "plain_al_all_null": all(r["acceptance_length"] is None for r in sweeps["plain"]),
                         "ratio_min": min(r["ratio_to_plain"] for n in drafted for r in figures["sweep"]["servers"][n]),
                         "ratio_max": max(r["ratio_to_plain"] for n in drafted for r in figures["sweep"]["servers"][n])}
    data = [{"name": "tiny-llama / tiny-llama-draft", "source": "zoo models trained locally (tiny; CPU)"},
            {"name": f"{args.throughput_target} / {args.throughput_draft}",
             "source": "zoo models trained locally (the Throughput split's pair)"}]
    data.append({"name": "spec-bench", "source": f"{args.prompts} (Spec-Bench question.jsonl, real prompts, read in place)"}
                if args.prompts else {"name": "embedded pool", "source": "the package's embedded prompt pool (project text)"})
    data.append({"name": "random tier", "source": "SYNTHETIC random tokens (the Throughput split's random tier)"})
    record("spec_bench", figures, data=data)
    table = report.rows([(str(out / f"run-{e}.json"), [results[e]]) for e in results]
                        + [(name, levels) for name, levels in sweeps.items()])
    try:
        written = report.plots(table, str(out), force=True)
        print("\nplots: " + ", ".join(written))
    except ImportError:
        print("\nplots skipped: matplotlib is not installed")
    print("All wall-clock figures: tiny models on a shared CPU (CPU-specific), requests serialised by one model lock.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
