"""Benchmark of `mlx26 score-code`: our PRMs vs bandit vs semgrep (local rules), side by side.

Usage:  python benchmarks/score_code.py [--n 400] [--seed 12345] [--json] [--no-transformer]

On a synthetic held-out corpus (generator seed --seed; the shipped models were trained on
seed 0), in one run: step-level precision/recall/F1 (all, per CWE, and on the files whose
vulnerable steps neither analyzer flags), file-level detection with the paper's softmax
aggregate next to the last-step criterion, partial-code F1 on 25/50/75% line prefixes, and
throughput in lines/s with ratios to bandit and semgrep (target ≥ 10k lines/s for the linear
model). Real vulnerable/fixed Python pairs (NAME.vuln.py + NAME.fixed.py files, or JSONL with
vulnerable/fixed or before/after fields) are evaluated the same way when a folder under
../shared/data/ holds them in one of those layouts (the run says which it found). All figures are on
synthetic data and small locally trained models, not the paper's LLM PRM. Every run writes its
figures, with command, commit and machine, to benchmarks/results/score_code_synthetic.json (the
claims ledger reads them from there).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from _results import record
from mlx26.core.score_code import load_model
from mlx26.core.score_code.analyzers import available
from mlx26.core.score_code.corpus import generate
from mlx26.core.score_code.evaluate import evaluate, pair_examples, throughput


def real_pairs() -> tuple[str, list]:
    """Vulnerable/fixed Python pairs found in any folder under ../shared/data/ (see pair_examples)."""
    shared = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    if not shared.is_dir():
        return "no ../shared/data/ folder", []
    found = []
    for folder in sorted(p for p in shared.iterdir() if p.is_dir()):
        examples = pair_examples(str(folder))
        if examples:
            found.append((folder.name, examples))
    names = ", ".join(p.name for p in sorted(shared.iterdir()))
    if not found:
        return f"none found under ../shared/data/ (holds: {names}); skipped", []
    return ", ".join(n for n, _ in found), [e for _, ex in found for e in ex]


def _say(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr)


def _fmt(row: dict) -> str:
    return f"P {row['precision']:.3f}  R {row['recall']:.3f}  F1 {row['f1']:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=400, help="held-out files")
    ap.add_argument("--seed", type=int, default=12345, help="generator seed of the held-out set")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
    ap.add_argument("--no-transformer", action="store_true", help="skip the transformer PRM")
    args = ap.parse_args(argv)
    models = {"linear": load_model("linear")}
    if not args.no_transformer:
        models["transformer"] = load_model("transformer")
    analyzers = [a for a in ("bandit", "semgrep") if available(a)]
    examples = generate(args.n, args.seed)
    result = evaluate(examples, models, analyzers=analyzers, progress=_say)
    result["throughput_lines_per_s"] = throughput(examples, models, analyzers=analyzers)
    where, pairs = real_pairs()
    result["real_pairs"] = where
    if pairs:
        _say(f"evaluating on {len(pairs) // 2} real vulnerable/fixed pairs from {where}")
        result["real_pairs_eval"] = evaluate(pairs, models, analyzers=analyzers, progress=_say)
    result["cores"] = os.cpu_count()
    result["data"] = f"synthetic held-out corpus: {args.n} files, generator seed {args.seed}"
    result["seed"] = args.seed
    result["analyzers"] = analyzers
    data = [{"name": "synthetic", "source": f"mlx26.core.score_code.corpus: {args.n} SYNTHETIC files, generator "
             f"seed {args.seed} ({result['vulnerable_files']} vulnerable); the shipped models"}]
    if pairs:
        data.append({"name": "real-pairs", "source": f"vulnerable/fixed Python pairs from ../shared/data/{where}"})
    record("score_code_synthetic", result, data=data)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    print(f"score-code benchmark — {result['data']}; {result['vulnerable_files']} vulnerable; "
          f"{os.cpu_count()} cores; analyzers: {', '.join(analyzers) or 'none installed'}")
    print("(synthetic data and small locally trained models; not the paper's numbers)\n")
    cwes = sorted(k for k in next(iter(result["step_level"].values())) if k.startswith("CWE"))
    print(f"Step-level ({result['segmentation']} steps), analyzer-missed files: {result['analyzer_missed_files']}")
    for system, row in result["step_level"].items():
        print(f"  {system:15s} all: {_fmt(row['all'])} | missed-by-analyzers: F1 {row['analyzer_missed']['f1']:.3f}"
              f" R {row['analyzer_missed']['recall']:.3f}")
    print("\nStep-level F1 per CWE")
    print("  " + " " * 15 + " ".join(f"{c:>8s}" for c in cwes))
    for system, row in result["step_level"].items():
        print(f"  {system:15s}" + " ".join(f"{row[c]['f1']:8.3f}" for c in cwes))
    print("\nStep-level prefix verdicts (monotone labels): aggregate of steps so far vs last-step criterion")
    for system, row in result["prefix_level"].items():
        print(f"  {system:22s} {_fmt(row)}")
    print("\nFile-level detection (model/aggregator)")
    for system, row in result["file_level"].items():
        print(f"  {system:22s} {_fmt(row['all'])}")
    print("\nPartial-code detection F1 on line prefixes; label = the prefix already contains a vulnerable line"
          " | [the whole file is vulnerable]")
    for frac, row in result["partial_code"].items():
        now = {k: v for k, v in row.items() if not k.endswith("(file label)")}
        pos = next(iter(now.values()))["positives"]
        print(f"  {frac:>4s} ({pos} vulnerable prefixes): " + "  ".join(
            f"{k} {v['f1']:.3f} [{row[k + ' (file label)']['f1']:.3f}]" for k, v in now.items()))
    tp = result["throughput_lines_per_s"]
    print(f"\nThroughput on {tp['lines']} lines (lines/s)")
    for k, v in tp.items():
        if k == "lines":
            continue
        ratios = "  ".join(f"×{v / tp[a]:.1f} vs {a}" for a in analyzers if a != k and a in tp)
        flag = "  (target ≥ 10k: met)" if k == "linear" and v >= 10_000 else (
            "  (target ≥ 10k: NOT met)" if k == "linear" else "")
        print(f"  {k:12s} {v:10.0f}  {ratios}{flag}")
    print(f"\nReal vulnerable/fixed pairs: {result['real_pairs']}")
    if "real_pairs_eval" in result:
        real = result["real_pairs_eval"]
        for system, row in real["file_level"].items():
            print(f"  file level  {system:22s} {_fmt(row['all'])}")
        for system, row in real["step_level"].items():
            print(f"  step level  {system:22s} {_fmt(row['all'])}")
        for frac, row in real["partial_code"].items():
            print(f"  partial {frac:>4s}: " + "  ".join(f"{k} {v['f1']:.3f}" for k, v in row.items()
                                                   if not k.endswith("(file label)")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
