"""Benchmark the simplify engine against sympy.simplify: speed, length, soundness, rules, decontamination.

Reconstructs the speed/efficacy comparison of Saegert & Köthe, "Breaking the
Simplification Bottleneck in Amortized Neural Symbolic Regression" (ICML 2026, arXiv
2602.08885) with our own engine, all in one run (``make bench-simplify``):

    .venv/bin/python benchmarks/simplify.py --n 1000 --seed 0 [--throughput-n 100000] [--corpus FILE]

1. speed and length vs ``sympy.simplify`` on ``--n`` seeded random expressions (SYNTHETIC);
2. soundness (zero failures expected) on those rows, on SymPy's own simplify test inputs
   (re-extracted from the installed sympy package now, never vendored) and on a corpus file:
   ``--corpus FILE`` (e.g. SimpliPy's ``benchmarks/corpus/raw_skeletons.json``); default our
   400-row corpus generated from SimpliPy's grammar (SYNTHETIC, tests/simplify/data);
3. what the mined rules add on top of the built-in arithmetic with AC matching on;
4. decontamination recall/precision on Nguyen-1..12 respellings, SymPy forms and near misses;
5. throughput of ``simplify_many`` with 1 process and a 2-worker pool.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from _results import record
from mlx26.core.simplify import bench, random_expressions, throughput
from mlx26.core.simplify.bench import (
    corpus_report,
    decontam_recall,
    rules_contribution,
    soundness_report,
    sympy_test_inputs,
)

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent / "tests" / "simplify" / "data" / "simplipy_grammar_corpus.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=1.0)
    ap.add_argument("--max-ops", type=int, default=10)
    ap.add_argument("--mode", default="sound", choices=["sound", "lossy"])
    ap.add_argument("--throughput-n", type=int, default=100_000)
    ap.add_argument("--corpus", default=None, help="corpus file (default: our grammar corpus, synthetic)")
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON too")
    args = ap.parse_args(argv)
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731

    r = bench(n=args.n, seed=args.seed, timeout=args.timeout, max_ops=args.max_ops, mode=args.mode, progress=log)
    log("soundness: random set")
    exprs = random_expressions(args.n, seed=args.seed, max_ops=args.max_ops)
    s_rand = soundness_report(exprs, args.mode)
    log("soundness: sympy's own test inputs")
    s_sym = soundness_report(sympy_test_inputs(), args.mode)
    corpus = Path(args.corpus) if args.corpus else DEFAULT_CORPUS
    c_rep = corpus_report(corpus, args.mode)
    log("rules contribution")
    contrib = rules_contribution(exprs, args.mode)
    log("decontamination recall")
    dec = decontam_recall(seed=args.seed)
    tp = []
    if args.throughput_n > 0:
        for w in (1, 2):
            tp.append(throughput(n=args.throughput_n, seed=args.seed, workers=w, max_ops=args.max_ops, mode=args.mode))
    corpus_label = "user file" if args.corpus else "SYNTHETIC, from SimpliPy's grammar"
    rows = [
        ("expressions (compared / undefined skipped) [SYNTHETIC]", f"{r['rows']} / {r['undefined']}"),
        ("median speed ratio SymPy/ours (target >= 100x)", f"{r['median_speed_ratio']:.0f}x"),
        ("median time ours / SymPy [ms]", f"{r['ours_median_ms']:.3f} / {r['sympy_median_ms']:.1f}"),
        ("mean length ratio out/in ours / SymPy", f"{r['ours_len_ratio']:.3f} / {r['sympy_len_ratio']:.3f}"),
        ("outputs longer than input ours / SymPy", f"{100 * r['ours_longer_rate']:.1f}% / "
                                                   f"{100 * r['sympy_longer_rate']:.1f}%"),
        ("SymPy timeouts (> {:.1f} s) / errors".format(r["timeout"]), f"{r['sympy_timeouts']} / {r['sympy_errors']}"),
        ("soundness failures, random set", f"{s_rand['unsound']} of {s_rand['rows']}"),
        ("soundness failures, sympy test inputs (re-extracted)", f"{s_sym['unsound']} of {s_sym['rows']} "
                                                                 f"(len ratio {s_sym['len_ratio']:.3f})"),
        (f"corpus {corpus.name} ({corpus_label}): parsed", f"{c_rep['parsed']} of {c_rep['corpus_rows']}"),
        ("corpus soundness failures / refused (undefined)", f"{c_rep['unsound']} / {c_rep['refused']} "
                                                            f"(len ratio {c_rep['len_ratio']:.3f})"),
        ("rows the mined rules shorten (AC matching on)", f"{contrib['mined_rules_shorten']} of {contrib['rows']}"),
        ("mean length ratio: all rules / identities only / none",
         f"{contrib['len_ratio_all']:.3f} / {contrib['len_ratio_identities_only']:.3f} / "
         f"{contrib['len_ratio_no_rules']:.3f}"),
        (f"decontam recall, Nguyen respellings (n={dec['respellings']}) canonical / first pass",
         f"{dec['canonical_recall_respellings']:.3f} / {dec['first_pass_recall_respellings']:.3f}"),
        (f"decontam recall, SymPy forms (n={dec['sympy_forms']}) canonical / first pass",
         f"{dec['canonical_recall_sympy_forms']:.3f} / {dec['first_pass_recall_sympy_forms']:.3f}"),
        (f"decontam precision, near misses (n={dec['near_misses']}) canonical / first pass",
         f"{dec['canonical_precision_near_misses']:.3f} / {dec['first_pass_precision_near_misses']:.3f}"),
        ("cores", str(os.cpu_count())),
    ]
    for t in tp:
        rows.append((f"throughput ours, {t['workers']} worker(s), n={t['n']}", f"{t['expr_per_s']:.0f} expr/s"))
    w = max(len(k) for k, _ in rows)
    print(f"simplify benchmark (n={args.n}, seed={args.seed}, mode={args.mode}, max_ops={args.max_ops})")
    print("-" * (w + 24))
    for k, v in rows:
        print(f"{k:<{w}}  {v}")
    if dec["canonical_missed_respellings"] or dec["canonical_missed_sympy_forms"]:
        print("missed (canonical):", dec["canonical_missed_respellings"] + dec["canonical_missed_sympy_forms"])
    if s_rand["unsound_examples"] or s_sym["unsound_examples"]:
        print("unsound examples:", s_rand["unsound_examples"] + s_sym["unsound_examples"])
    record("simplify", {"bench": r, "soundness_random": s_rand, "soundness_sympy_tests": s_sym, "corpus": c_rep,
                        "rules": contrib, "decontam": dec, "throughput": tp},
           data=[{"name": "synthetic", "source": f"{args.n} seeded random expressions (seed {args.seed})"},
                 {"name": "sympy-tests", "source": "simplify test inputs re-extracted from the installed sympy package"},
                 {"name": corpus.name, "source": str(corpus) + f" ({corpus_label})"},
                 {"name": "nguyen", "source": "Nguyen-1..12 formulas, respelled by the benchmark"}])
    if args.json:
        print(json.dumps({"bench": r, "soundness_random": s_rand, "soundness_sympy_tests": s_sym, "corpus": c_rep,
                          "rules": contrib, "decontam": dec, "throughput": tp}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
