"""Benchmark of `mlx26 score-code` on REAL code: linear PRM, transformer PRM, bandit ≥ medium, semgrep.

Usage:  python benchmarks/score_code_real.py [--sven ../shared/data/sven] [--model-dir DIR]
                                             [--stdlib-files 200] [--seed 0] [--json]

One run, side by side, every system on exactly the same inputs (protocol:
mlx26.core.score_code.realeval): SVEN test (= SVEN val, repository-disjoint from the training
parts) function-level P/R/F1 and per-CWE F1, top-1 step localisation, ranking (fixed over
vulnerable), the false-alarm rate on a seeded sample of standard-library files (ordinary code,
assumed benign; analyzer findings there are not truth), verdict flips when two benign helpers
are prepended or locals renamed, and in-process lines/s. The acceptance targets of issue #25
are printed beside. PRM verdicts use the operating rule in the model folder's manifest.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from _results import record
from mlx26.core.common.errors import Mlx26Error
from mlx26.core.score_code import load_model
from mlx26.core.score_code import realeval as R
from mlx26.core.score_code.analyzers import available
from mlx26.core.score_code.prm import SHIPPED_DIR

DEFAULT_SVEN = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sven"


def _say(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr)


def run(sven_dir: str, model_dir: str | None, stdlib_n: int, seed: int) -> dict:
    folder = Path(model_dir) if model_dir else SHIPPED_DIR
    kinds = [k for k in ("linear", "transformer") if (folder / f"{k}.npz").is_file()]
    models = {k: load_model(k, model_dir) for k in kinds}
    rules = {k: R.operating_rule(k, model_dir) for k in kinds}
    analyzers = [a for a in ("bandit", "semgrep") if available(a)]
    pairs = R.load_test_pairs(sven_dir)
    result = R.evaluate_real(pairs, models, rules, analyzers=analyzers, stdlib_n=stdlib_n, seed=seed, progress=_say)
    result["model_dir"] = str(folder)
    result["missing_analyzers"] = [a for a in ("bandit", "semgrep") if a not in analyzers]
    result["cores"] = os.cpu_count()
    return result


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def report(r: dict) -> str:
    systems = r["systems"]
    prms = [s for s in systems if s in r["operating_rules"]]
    tools = [s for s in systems if s not in prms]
    d, fa, rob = r["data"], r["false_alarms"], r["robustness"]
    w = 15
    out = [f"score-code on REAL code — SVEN test: {d['pairs']} pairs ({d['functions']} functions, "
           f"{d['repositories']} repositories, by CWE {d['by_cwe']}); stdlib sample: {fa['files']} files, "
           f"{fa['lines']} lines (seed {r['seed']}); {r['segmentation']} steps; {r['cores']} cores",
           f"models: {r['model_dir']}; operating rules: " + "; ".join(
               f"{m} {v['aggregate']} τ={v['tau']} threshold={v['threshold']}" for m, v in r["operating_rules"].items()),
           "(small locally trained PRMs, not the paper's LLM PRM)"]
    if r.get("missing_analyzers"):
        out.append(f"NOT installed, left out: {', '.join(r['missing_analyzers'])}")
    out.append("")
    out.append(f"{'':34s}" + "".join(f"{s:>{w}s}" for s in systems) + "   target")

    def row(label: str, cells: list[str], target: str = "") -> None:
        out.append(f"{label:34s}" + "".join(f"{c:>{w}s}" for c in cells) + (f"   {target}" if target else ""))

    fl = r["function_level"]
    row("SVEN function F1", [f"{fl[s]['all']['f1']:.3f}" for s in systems], "PRM F1 above both analyzers")
    row("  precision", [f"{fl[s]['all']['precision']:.3f}" for s in systems])
    row("  recall", [f"{fl[s]['all']['recall']:.3f}" for s in systems])
    for c in d["by_cwe"]:
        row(f"  F1 {c} ({d['by_cwe'][c]} pairs)", [f"{fl[s]['by_cwe'][c]['f1']:.3f}" for s in systems])
    loc = r["localisation_top1"]
    row("top-1 localisation (vulnerable)", [f"{loc[s]['hits']}/{loc[s]['n']} {loc[s]['rate']:.0%}" for s in systems],
        "reported")
    row("  mean lines of the top step/finding", [f"{loc[s]['mean_lines_of_top']:.1f}" for s in systems])
    row("  a random step instead (chance)", [f"{loc[s]['random_step_rate']:.0%}" if "random_step_rate" in loc[s]
                                            else "-" for s in systems])
    rk = r["ranking"]
    row("ranking: fixed preferred", [f"{rk[s]['preferred']}/{rk[s]['pairs']} {rk[s]['rate']:.0%}" for s in systems],
        "≥ 90%")
    row("  ties", [str(rk[s]["ties"]) for s in systems])
    row("stdlib files flagged (false alarm)", [f"{fa[s]['flagged']}/{fa['files']} {fa[s]['rate']:.1%}"
                                               for s in systems], "≤ 5% (bandit≥medium: reference)")
    pre, ren = rob["prepend"], rob["rename"]
    row("flips: 2 helpers prepended", [f"{pre[s]['flips']}/{pre[s]['n']}" for s in systems], "≤ 1 in 20")
    row("flips: locals renamed", [f"{ren[s]['flips']}/{ren[s]['n']}" for s in systems],
        f"reported ({rob['rename_skipped']} of {rob['functions']} skipped: nothing to rename / no parse)")
    tp = r["throughput_lines_per_s"]
    row("throughput (lines/s, in-process)", [f"{tp[s]:.0f}" if s in tp else "-" for s in systems],
        "linear ≥ 10k")
    out.append("")
    out.append("Acceptance (issue #25), per PRM:")
    best_tool = max((fl[t]["all"]["f1"] for t in tools), default=0.0)
    for m in prms:
        checks = [f"F1 {fl[m]['all']['f1']:.3f} vs best analyzer {best_tool:.3f}: "
                  f"{_met(bool(tools) and fl[m]['all']['f1'] > best_tool)}",
                  f"false alarms {fa[m]['rate']:.1%}: {_met(fa['files'] > 0 and fa[m]['rate'] <= 0.05)}",
                  f"prepend flips {pre[m]['flips']}/{pre[m]['n']}: {_met(pre[m]['flips'] <= 1)}",
                  f"ranking {rk[m]['rate']:.0%}: {_met(rk[m]['rate'] >= 0.9)}"]
        if m == "linear":
            checks.append(f"{tp.get(m, 0):.0f} lines/s: {_met(tp.get(m, 0) >= 10_000)}")
        out.append(f"  {m:12s} " + "; ".join(checks))
    out.append("")
    out.append(f"stdlib files are {R.BENIGN_NOTE}.")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sven", default=str(DEFAULT_SVEN), help="SVEN folder (train/ and val/)")
    ap.add_argument("--model-dir", default=None, help="model folder (default: the shipped models)")
    ap.add_argument("--stdlib-files", type=int, default=200, help="stdlib files sampled for false alarms")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = ap.parse_args(argv)
    try:
        result = run(args.sven, args.model_dir, args.stdlib_files, args.seed)
    except Mlx26Error as exc:
        print(f"Error: {exc.message}" + (f"\nHint: {exc.hint}" if exc.hint else ""), file=sys.stderr)
        return exc.exit_code
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else report(result))
    d = result["data"]
    record("score_code_real", result, data=[
        {"name": "sven", "source": f"{args.sven} (eth-sri/sven, MIT): val split, {d['pairs']} real Python "
         f"vulnerability fixes ({d['functions']} functions, {d['repositories']} repositories)"},
        {"name": "python-stdlib", "source": f"{result['false_alarms']['files']} standard-library files "
         f"(seed {args.seed}), assumed benign"}])
    return 0


if __name__ == "__main__":
    sys.exit(main())
