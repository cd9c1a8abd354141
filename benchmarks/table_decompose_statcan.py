"""Benchmark `table-decompose` on real StatCan tables against pandas.read_html and openpyxl forward-fill.

Reconstruction of Cao et al., "Orthogonal Hierarchical Decomposition" (ICML 2026, arXiv
2602.01969); the protocol is ours. The tables are the 50 HiTab StatCan tables, read in place
from ``../shared/data/hitab-statcan`` (C-UDA); the gold is mlx26's own hand annotation
(``tests/table_decompose/statcan_gold``). Usage (``make bench-table-decompose``):

    .venv/bin/python benchmarks/table_decompose_statcan.py [--tables DIR] [--gold DIR] [--repeat 5] [--json]

One run prints, per split (tune / held-out) and source format: both-paths exact match, row-only
and column-only exact match, tables fully right, seconds per table, for

* **OHD (ours)** on the XLSX and on the HTML, given nothing but the file;
* **pandas.read_html** on the HTML, *given the true header rows and row-header columns*
  (``header=``, ``index_col=`` from the gold): column path = the MultiIndex levels (unnamed
  levels dropped), row path = the index labels;
* **openpyxl + naive forward fill** on the XLSX, given the same: every merged range filled with
  its value, column path = the header cells above the column, row path = the row-header cells
  of the row (no indentation, no sections).

and the time ratio ours/pandas on the same HTML (target ≤ 1.5).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from _results import record
from mlx26.core.table_decompose import decompose, load_grid
from mlx26.core.table_decompose.cells import label_of
from mlx26.core.table_decompose.gold import GoldTable, load_gold

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT.parent / "shared" / "data" / "hitab-statcan"
GOLD = ROOT / "tests" / "table_decompose" / "statcan_gold"


def _label(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = label_of(str(value))
    return "" if text.startswith("Unnamed:") else text


def _dedup(labels: list[str]) -> list[str]:
    out: list[str] = []
    for x in labels:
        if x and (not out or out[-1] != x):
            out.append(x)
    return out


def _sheet_texts(path: Path) -> list[list[str]]:
    grid = load_grid(path.read_bytes(), fmt="html")
    return grid.texts()


def ours(gold: GoldTable, path: Path, fmt: str) -> tuple[dict[tuple[int, int], tuple[list[str], list[str]]], float]:
    data = path.read_bytes()
    t0 = time.perf_counter()
    dec = decompose(load_grid(data, fmt=fmt, name=path.name))
    seconds = time.perf_counter() - t0
    origin = (dec.grid.source or {}).get("origin") or "A1"
    from mlx26.core.table_decompose.gold import cell_index

    r0, c0 = cell_index(origin)
    return {(rec["row"] + r0, rec["col"] + c0): ([label_of(x) for x in rec["row_path"]],
                                                 [label_of(x) for x in rec["col_path"]]) for rec in dec.records}, seconds


def pandas_given_headers(gold: GoldTable, path: Path) -> tuple[dict[tuple[int, int], tuple[list[str], list[str]]], float]:
    import pandas as pd

    html = path.read_text(encoding="utf-8")
    first, last = gold.header_rows
    t0 = time.perf_counter()
    frame = pd.read_html(io.StringIO(html), header=list(range(first, last + 1)),
                         index_col=list(range(gold.L)) if gold.L else None)[0]
    seconds = time.perf_counter() - t0
    texts = _sheet_texts(path)
    # pandas drops blank lines: its rows are the non-empty sheet rows below the header, in order.
    body = [r for r in range(last + 1, len(texts)) if any(label_of(t) for t in texts[r])]
    out = {}
    columns = list(frame.columns)
    for i, r in enumerate(body[:len(frame)]):
        key = frame.index[i]
        row_path = _dedup([_label(k) for k in (key if isinstance(key, tuple) else (key,))]) if gold.L else []
        for j, col in enumerate(columns):
            col_path = _dedup([_label(x) for x in (col if isinstance(col, tuple) else (col,))])
            out[(r, gold.L + j)] = (row_path, col_path)
    return out, seconds


def openpyxl_forward_fill(gold: GoldTable, path: Path) -> tuple[dict[tuple[int, int], tuple[list[str], list[str]]], float]:
    import openpyxl

    t0 = time.perf_counter()
    ws = openpyxl.load_workbook(path, data_only=True).active
    grid = [[_label(c.value) for c in row] for row in ws.iter_rows()]
    for m in ws.merged_cells.ranges:
        value = grid[m.min_row - 1][m.min_col - 1]
        for r in range(m.min_row - 1, m.max_row):
            for c in range(m.min_col - 1, m.max_col):
                grid[r][c] = value
    first, last = gold.header_rows
    out = {}
    width = max(len(row) for row in grid)
    for r in range(last + 1, len(grid)):
        row_path = _dedup([grid[r][c] for c in range(gold.L)])
        for c in range(gold.L, width):
            col_path = _dedup([grid[h][c] for h in range(first, last + 1) if c < len(grid[h])])
            out[(r, c)] = (row_path, col_path)
    return out, time.perf_counter() - t0


def score(gold: GoldTable, texts: list[list[str]], pred: dict) -> dict[str, int]:
    cells = gold.cells(texts)
    row = col = both = 0
    for pos, (g_row, g_col) in cells.items():
        p = pred.get(pos)
        ok_r = p is not None and p[0] == g_row
        ok_c = p is not None and p[1] == g_col
        row += ok_r
        col += ok_c
        both += ok_r and ok_c
    return {"cells": len(cells), "row": row, "col": col, "both": both}


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    cells = sum(t["cells"] for t in rows) or 1
    return {"tables": len(rows), "cells": sum(t["cells"] for t in rows),
            "both": round(sum(t["both"] for t in rows) / cells, 4), "row": round(sum(t["row"] for t in rows) / cells, 4),
            "col": round(sum(t["col"] for t in rows) / cells, 4),
            "fully_right": sum(1 for t in rows if t["cells"] and t["both"] == t["cells"]),
            "ms_per_table": round(1000 * sum(t["seconds"] for t in rows) / max(len(rows), 1), 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=Path, default=TABLES)
    ap.add_argument("--gold", type=Path, default=GOLD)
    ap.add_argument("--repeat", type=int, default=5, help="timing: best of N per table and method")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not args.tables.is_dir():
        print(f"table_decompose_statcan benchmark: no tables at {args.tables}; give --tables DIR", file=sys.stderr)
        return 2
    golds = load_gold(args.gold)
    methods = {"OHD (ours), XLSX": lambda g: ours(g, args.tables / f"{g.table}.xlsx", "xlsx"),
               "OHD (ours), HTML": lambda g: ours(g, args.tables / f"{g.table}.html", "html"),
               "pandas.read_html, given H and L": lambda g: pandas_given_headers(g, args.tables / f"{g.table}.html"),
               "openpyxl + forward fill, given H and L": lambda g: openpyxl_forward_fill(
                   g, args.tables / f"{g.table}.xlsx")}
    results: dict[str, list[dict[str, Any]]] = {m: [] for m in methods}
    for g in golds:
        texts = _sheet_texts(args.tables / f"{g.table}.html")
        for name, fn in methods.items():
            pred, seconds = fn(g)
            for _ in range(args.repeat - 1):
                seconds = min(seconds, fn(g)[1])
            results[name].append({"table": g.table, "split": g.split, "seconds": seconds, **score(g, texts, pred)})
    splits = sorted({g.split for g in golds}, reverse=True)
    print(f"table-decompose on real StatCan tables ({len(golds)} with mlx26 gold: "
          + ", ".join(f"{sum(g.split == s for g in golds)} {s}" for s in splits) + f"; timing best of {args.repeat})")
    header = f"{'method':<40}{'split':<9}{'both':>7}{'row':>7}{'col':>7}{'fully right':>13}{'ms/table':>10}"
    print(header)
    report: dict[str, Any] = {}
    for name, rows in results.items():
        for split in splits + ["all"]:
            part = [t for t in rows if split == "all" or t["split"] == split]
            s = _summary(part)
            report.setdefault(name, {})[split] = s
            print(f"{name:<40}{split:<9}{s['both']:>7.3f}{s['row']:>7.3f}{s['col']:>7.3f}"
                  f"{str(s['fully_right']) + '/' + str(s['tables']):>13}{s['ms_per_table']:>10.2f}")
    ours_html = report["OHD (ours), HTML"]["all"]["ms_per_table"]
    pandas = report["pandas.read_html, given H and L"]["all"]["ms_per_table"]
    print(f"time per table on the same HTML, ours/pandas.read_html: {ours_html / pandas:.2f} (target <= 1.5)")
    print(f"cores: {os.cpu_count()}")
    short = dict(zip(methods, ("ohd_xlsx", "ohd_html", "pandas", "openpyxl_ffill"), strict=True))
    # The tables OHD gets partly wrong (HTML; XLSX gives the same per table), and the clean held-out set:
    # tables 31-50, annotated after the rules were frozen (docs/table-decompose.md).
    html_rows = results["OHD (ours), HTML"]
    misses = [f"{t['table']} ({t['cells'] - t['both']} of {t['cells']} cells wrong)" for t in html_rows
              if t["cells"] and t["both"] != t["cells"]]
    clean = [t for t in html_rows if t["table"].rsplit("_", 1)[-1].isdigit() and int(t["table"].rsplit("_", 1)[-1]) >= 31]
    record("table_decompose_statcan", {"report": {short[k]: v for k, v in report.items()},
                                       "time_ratio_html_vs_pandas": ours_html / pandas,
                                       "ohd_html_not_fully_right": misses,
                                       "ohd_html_clean_heldout_31_50": _summary(clean),
                                       "repeat": args.repeat},
           data=[{"name": "hitab-statcan", "source": f"{args.tables} ({len(golds)} real StatCan tables, HiTab, "
                  "C-UDA licence)"}, {"name": "statcan-gold", "source": f"{args.gold} (mlx26's own gold labels)"}])
    if args.json:
        print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
