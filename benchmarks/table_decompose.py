"""Benchmark `mlx26 table-decompose` (OHD) against pandas and Markdown linearisation, side by side.

Reconstruction of Cao et al., "Orthogonal Hierarchical Decomposition for Structure-Aware
Table Understanding with LLMs" (ICML 2026, arXiv 2602.01969); the protocol is ours (see
``mlx26.core.table_decompose.retrieval``). Usage (``make bench-table``):

    .venv/bin/python benchmarks/table_decompose.py [--aitqa DIR] [--rows 1000 --cols 50 --repeat 3] [--json]

AITQA (IBM AIT-QA, CDLA-Sharing-1.0) is not in the repository: ``--aitqa`` names the folder holding
``aitqa_tables.jsonl`` and ``aitqa_questions.jsonl``; the default is ``../shared/data/aitqa``
beside the repository root (found from this file's location, not the current folder).

Prints, in one run:
1. LLM-free answer retrieval on AITQA (TF-IDF top-1, no model): accuracy of OHD ``lines``,
   of pandas ``read_html`` flattened headers and of a Markdown linearisation, overall and on
   questions flagged ``row_hierarchy_needed``, with the ratios OHD/pandas and OHD/markdown;
2. structure recovery on AITQA (both-paths exact match; XLSX merged, blank-filled CSV, HTML, Markdown);
3. speed on a generated rows×cols table: our read and decomposition times (best of
   ``--repeat``) and, as the anchor, ``pandas.read_html`` on the same HTML (ratio ours/pandas);
4. the machine's core count.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import sys
import time
from pathlib import Path

from _results import record
from mlx26.core.table_decompose import decompose, load_grid
from mlx26.core.table_decompose.evaluate import eval_aitqa
from mlx26.core.table_decompose.render import LogicalTable, layout, to_csv, to_html
from mlx26.core.table_decompose.retrieval import run as retrieval

AITQA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "aitqa"


def _generated(rows: int, cols: int, seed: int = 0) -> LogicalTable:
    rng = random.Random(seed)
    col_paths = [[f"Group {j // 5}", f"Measure {j}"] for j in range(cols - 1)]
    row_paths = [[f"Section {i // 20}", f"Item {i}"] for i in range(rows)]
    data = [[f"{rng.randint(0, 99999):,}" for _ in range(cols - 1)] for _ in range(rows)]
    return LogicalTable(col_paths, row_paths, data)


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def speed(rows: int, cols: int, repeat: int) -> dict[str, float]:
    import pandas as pd

    table = _generated(rows, cols)
    html = to_html(layout(table, rows="indent")).encode()
    csv = to_csv(layout(table, rows="columns")).encode()
    html_grid = load_grid(html, fmt="html")
    csv_grid = load_grid(csv, fmt="csv")
    out = {
        "cells": rows * (cols - 1),
        "html_read_s": _best(lambda: load_grid(html, fmt="html"), repeat),
        "html_decompose_s": _best(lambda: decompose(html_grid), repeat),
        "csv_read_s": _best(lambda: load_grid(csv, fmt="csv"), repeat),
        "csv_decompose_s": _best(lambda: decompose(csv_grid), repeat),
        "pandas_read_html_s": _best(lambda: pd.read_html(io.StringIO(html.decode())), repeat),
    }
    out["html_total_s"] = out["html_read_s"] + out["html_decompose_s"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aitqa", type=Path, default=AITQA,
                    help="the AITQA folder (default: ../shared/data/aitqa beside the repository)")
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--cols", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON too")
    args = ap.parse_args(argv)
    if not (args.aitqa / "aitqa_tables.jsonl").is_file() or not (args.aitqa / "aitqa_questions.jsonl").is_file():
        print(f"table_decompose benchmark: no AITQA at {args.aitqa} (expected aitqa_tables.jsonl and "
              "aitqa_questions.jsonl there); give --aitqa DIR", file=sys.stderr)
        return 2

    print("retrieval on AITQA ...", file=sys.stderr, flush=True)
    r = retrieval(args.aitqa)
    acc = r["accuracy"]
    print("structure on AITQA ...", file=sys.stderr, flush=True)
    s = eval_aitqa(args.aitqa, renders=("xlsx", "csv", "html", "md"))["renders"]
    print(f"speed on {args.rows}x{args.cols} ...", file=sys.stderr, flush=True)
    sp = speed(args.rows, args.cols, args.repeat)

    q = r["questions"]
    print(f"table-decompose benchmark (AITQA: {r['tables']} tables, {q['all']} questions, "
          f"{q['Yes']} flagged row_hierarchy_needed; TF-IDF top-1, no LLM)")
    print(f"{'method':<34}{'all':>8}{'hierarchy':>11}{'no hier.':>10}")
    for name, label in (("ohd", "OHD lines (ours)"), ("pandas", "pandas read_html, flattened"),
                        ("markdown", "markdown linearisation")):
        print(f"{label:<34}{acc[name]['all']:>8.3f}{acc[name]['Yes']:>11.3f}{acc[name]['No']:>10.3f}")
    for anchor in ("pandas", "markdown"):
        ratios = [acc["ohd"][k] / acc[anchor][k] if acc[anchor][k] else float("inf") for k in ("all", "Yes", "No")]
        print(f"{'ratio OHD/' + anchor:<34}{ratios[0]:>8.2f}{ratios[1]:>11.2f}{ratios[2]:>10.2f}")
    print()
    for render, label in (("xlsx", "XLSX merged + indentation"), ("csv", "blank-filled CSV"), ("html", "HTML"),
                          ("md", "Markdown")):
        o = s[render]["overall"]
        print(f"structure, {label:<28} both-paths EM {o['both_paths_em']:.4f}  (row {o['row_path_em']:.4f}, "
              f"col {o['col_path_em']:.4f}; H/L acc {o['H_accuracy']:.3f}/{o['L_accuracy']:.3f}; "
              f"{o['tables']} tables, {o['cells']} cells)")
    print()
    print(f"speed, {args.rows}x{args.cols} table ({sp['cells']} data cells), best of {args.repeat}:")
    print(f"  CSV  read {sp['csv_read_s']:.3f} s + decompose {sp['csv_decompose_s']:.3f} s")
    print(f"  HTML read {sp['html_read_s']:.3f} s + decompose {sp['html_decompose_s']:.3f} s "
          f"= {sp['html_total_s']:.3f} s; pandas.read_html {sp['pandas_read_html_s']:.3f} s "
          f"(ratio ours/pandas {sp['html_total_s'] / sp['pandas_read_html_s']:.2f})")
    print(f"cores: {os.cpu_count()}")
    structure = {k: v["overall"] for k, v in s.items()}
    record("table_decompose", {"retrieval": r, "structure": structure,
                               "structure_min_both_paths": min(o["both_paths_em"] for o in structure.values()),
                               "speed": sp | {"ours_over_pandas": sp["html_total_s"] / sp["pandas_read_html_s"]}},
           data=[{"name": "aitqa", "source": f"{args.aitqa} (IBM AIT-QA, CDLA-Sharing-1.0, read in place; its tables "
                  "rendered by us as XLSX / CSV / HTML / Markdown)"},
                 {"name": "generated table", "source": f"SYNTHETIC: a generated {args.rows}x{args.cols} table (speed)"}])
    if args.json:
        print(json.dumps({"retrieval": r, "structure": {k: v["overall"] for k, v in s.items()}, "speed": sp},
                         indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
