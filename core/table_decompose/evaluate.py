"""Metrics against gold header paths: path exact match, header-region accuracy, tree edge F1.

Our evaluation protocol for the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969)
(the paper's own evaluation is not public). For every non-empty gold data cell we compare the
predicted row path and column path with the gold ones (labels whitespace-normalised): exact
match of the row path, of the column path and of both; a cell the decomposition does not
treat as data counts as a miss. Header-region accuracy: the fraction of tables whose
predicted H (top header rows) and L (left header columns) equal the gold ones, where H counts
the header rows that hold a label anchored in them (an empty row inside a merged header, or
the rows a vertical merge merely covers, do not count) — the same definition for the gold
header rows and the predicted header region (its header rows plus a top row read as a row
block). Edge F1: a tree's nodes as label paths from the root (each fixes its parent edge),
predicted vs gold, micro-averaged over tables. Column nodes are the prefixes of the column
paths on both sides (a units level appended to the paths is a node there, as in the gold);
row nodes are the predicted row tree's nodes against the prefixes of the gold row paths.

Gold sources: AITQA (each table rendered by ``render`` in a chosen style, so the gold H/L are
those of the rendering) and HiTab table JSON files (gold from ``top_root``/``left_root`` and
the header counts).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.table_decompose.arbiter import Arbiter
from mlx26.core.table_decompose.cells import label_of
from mlx26.core.table_decompose.decompose import Decomposition, decompose
from mlx26.core.table_decompose.load import load_grid
from mlx26.core.table_decompose.render import LogicalTable, layout, to_csv, to_html, to_markdown, to_xlsx
from mlx26.core.table_decompose.spec import DEFAULT_RENDERS, GOLD_SOURCES, RENDERS
from mlx26.core.table_decompose.trees import Tree

RENDER_HELP = {
    "xlsx": "XLSX, merged column headers, row hierarchy by alignment.indent and section rows",
    "csv": "blank-filled CSV, row hierarchy as one column per level (parents written once)",
    "html": "HTML, rowspan/colspan headers, row hierarchy by padding-left and section rows",
    "csv-indent": "blank-filled CSV, row hierarchy by leading no-break spaces and section rows",
    "md": "Markdown pipe table, blank-filled, row hierarchy by leading no-break spaces",
}


def render_bytes(table: LogicalTable, render: str) -> tuple[bytes, str, Any]:
    """(bytes, input format, Rendered) of a logical table in one of ``RENDERS``."""
    if render not in RENDERS:
        raise InputError(f"unknown rendering '{render}'", "choose one of: " + ", ".join(RENDERS))
    rendered = layout(table, rows="columns" if render == "csv" else "indent")
    if render == "xlsx":
        return to_xlsx(rendered), "xlsx", rendered
    if render == "html":
        return to_html(rendered).encode("utf-8"), "html", rendered
    if render == "md":
        return to_markdown(rendered).encode("utf-8"), "md", rendered
    return to_csv(rendered).encode("utf-8"), "csv", rendered


def _nodes(tree: Tree) -> set[tuple[str, ...]]:
    return {tuple(label_of(tree.nodes[x].label) for x in tree.chain(n)) for n in tree.nodes}


def _prefixes(paths: Iterable[list[str]]) -> set[tuple[str, ...]]:
    return {tuple(p[:k]) for p in paths for k in range(1, len(p) + 1)}


def labelled_rows(grid: Any, rows: Iterable[int]) -> int:
    """How many of ``rows`` hold a non-empty cell anchored in them (the H of a header region)."""
    anchored = {c.row for c in grid.cells if c.label}
    return sum(1 for r in set(rows) if r in anchored)


def predicted_header_rows(dec: Decomposition) -> list[int]:
    """The predicted header region: its header rows plus a top header row read as a row block."""
    lay = dec.layout
    first = min(lay.header_rows + lay.body_rows, default=0)
    return sorted(set(lay.header_rows) | {b for b in lay.block_rows if b < first})


def compare(dec: Decomposition, gold_cells: dict[tuple[int, int], tuple[list[str], list[str]]],
            gold_col_nodes: set[tuple[str, ...]], gold_row_nodes: set[tuple[str, ...]], H: int, L: int,
            *, header_rows: Iterable[int] | None = None) -> dict[str, Any]:
    """Per-table counts and scores of one decomposition against gold cells and trees.

    ``header_rows``: the gold header's grid rows; H_gold is then their labelled-row count (see the
    module docstring), otherwise ``H`` as given. H_pred is the labelled-row count of the
    predicted header region.
    """
    pred = {(rec["row"], rec["col"]): (list(map(label_of, rec["row_path"])), list(map(label_of, rec["col_path"])))
            for rec in dec.records}
    row = col = both = 0
    misses: list[dict[str, Any]] = []
    for pos, (g_row, g_col) in gold_cells.items():
        p = pred.get(pos)
        ok_row = p is not None and p[0] == g_row
        ok_col = p is not None and p[1] == g_col
        row += ok_row
        col += ok_col
        both += ok_row and ok_col
        if not (ok_row and ok_col) and len(misses) < 3:
            misses.append({"cell": list(pos), "gold": [g_row, g_col], "pred": list(p) if p else None})
    H_gold = labelled_rows(dec.grid, header_rows) if header_rows is not None else H
    out: dict[str, Any] = {"cells": len(gold_cells), "row_match": row, "col_match": col, "both_match": both,
                           "H_gold": H_gold, "H_pred": labelled_rows(dec.grid, predicted_header_rows(dec)),
                           "L_gold": L, "L_pred": dec.layout.L}
    col_nodes = _prefixes([label_of(dec.grid.cells[x].label) for x in p] for p in dec.col_paths.values())
    for name, predicted, gold in (("col", col_nodes, gold_col_nodes),
                                  ("row", _nodes(dec.row_tree), gold_row_nodes)):
        tp = len(predicted & gold)
        out[f"{name}_edges"] = [tp, len(predicted - gold), len(gold - predicted)]
    out["misses"] = misses
    return out


def _f1(tp: int, fp: int, fn: int) -> float:
    return 1.0 if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)


def summarise(per_table: list[dict[str, Any]]) -> dict[str, Any]:
    cells = sum(t["cells"] for t in per_table)
    n = len(per_table)

    def rate(key: str) -> float:
        return round(sum(t[key] for t in per_table) / cells, 4) if cells else 0.0

    out: dict[str, Any] = {"tables": n, "cells": cells, "row_path_em": rate("row_match"),
                           "col_path_em": rate("col_match"), "both_paths_em": rate("both_match")}
    if n:
        out["H_accuracy"] = round(sum(t["H_gold"] == t["H_pred"] for t in per_table) / n, 4)
        out["L_accuracy"] = round(sum(t["L_gold"] == t["L_pred"] for t in per_table) / n, 4)
        out["HL_accuracy"] = round(sum(t["H_gold"] == t["H_pred"] and t["L_gold"] == t["L_pred"]
                                       for t in per_table) / n, 4)
    for name in ("col", "row"):
        tp, fp, fn = (sum(t[f"{name}_edges"][k] for t in per_table) for k in range(3))
        out[f"{name}_edge_f1"] = round(_f1(tp, fp, fn), 4)
    return out


def _table_result(table_id: str, metrics: dict[str, Any]) -> dict[str, Any]:
    cells = metrics["cells"] or 1
    out = {"id": table_id, **{k: v for k, v in metrics.items() if k != "misses"}}
    out["both_paths_em"] = round(metrics["both_match"] / cells, 4)
    if metrics["misses"]:
        out["misses"] = metrics["misses"]
    return out


def eval_aitqa(path: str | Path, *, renders: Iterable[str] = DEFAULT_RENDERS,
               arbiter: Callable[[], Arbiter] | None = None, tables: list[str] | None = None,
               limit: int | None = None, per_table: bool = False) -> dict[str, Any]:
    """Render every (consistent) AITQA table in each style, decompose it, compare with the gold paths.

    ``path``: the AITQA folder (holding ``aitqa_tables.jsonl``) or that file; mlx26 ships no copy.
    """
    from mlx26.core.table_decompose.aitqa import load_tables, resolve

    data = load_tables(path)
    if tables:
        known = {t.id for t in data}
        unknown = [t for t in tables if t not in known]
        if unknown:
            raise InputError(f"unknown AITQA table id '{unknown[0]}'", "ids look like tab-5")
        data = [t for t in data if t.id in tables]
    skipped = [t.id for t in data if not t.consistent]
    data = [t for t in data if t.consistent][:limit]
    result: dict[str, Any] = {"gold": str(resolve(path, "aitqa_tables.jsonl").name), "gold_format": "aitqa",
                              "shape_inconsistent_skipped": skipped, "renders": {}}
    for render in renders:
        rows = []
        for item in data:
            raw, fmt, rendered = render_bytes(item.table, render)
            grid = load_grid(raw, fmt=fmt, name=f"{item.id}.{render}")
            dec = decompose(grid, arbiter=arbiter() if arbiter else None)
            gold = {rendered.data_pos[(i, j)]: (item.table.row_paths[i] if item.table.row_paths else [],
                                                item.table.col_paths[j])
                    for i, row in enumerate(item.table.data) for j, value in enumerate(row) if label_of(value)}
            metrics = compare(dec, gold, _prefixes(item.table.col_paths), _prefixes(item.table.row_paths),
                              rendered.H, rendered.L, header_rows=range(rendered.top, rendered.top + rendered.H))
            rows.append(_table_result(item.id, metrics))
        summary = summarise(rows)
        no_row_header = [r for r, t in zip(rows, data, strict=True) if not t.table.row_paths]
        summary["both_paths_em_tables_with_row_headers"] = summarise(
            [r for r in rows if r not in no_row_header])["both_paths_em"]
        summary["description"] = RENDER_HELP[render]
        entry: dict[str, Any] = {"overall": summary}
        if per_table:
            entry["per_table"] = rows
        result["renders"][render] = entry
    return result


def eval_hitab(path: str | Path, *, arbiter: Callable[[], Arbiter] | None = None, limit: int | None = None,
               per_table: bool = False) -> dict[str, Any]:
    """Decompose HiTab table JSON files (a file, or a folder of ``*.json``) and compare with their trees."""
    from mlx26.core.table_decompose.hitab import gold_paths, load_json, read_hitab

    p = Path(path)
    files = sorted(p.glob("*.json")) if p.is_dir() else [p]
    if not files or not all(f.is_file() for f in files):
        raise InputError(f"no HiTab table JSON found at {path}", "give a .json table file or a folder of them")
    rows = []
    for f in files[:limit]:
        data = load_json(f.read_text(encoding="utf-8"), f.name)
        grid = read_hitab(data, name=f.name)
        dec = decompose(grid, arbiter=arbiter() if arbiter else None)
        gold = gold_paths(data)
        H, L = gold["H"], gold["L"]
        texts = data["texts"]
        cells = {(r, c): (gold["row_paths"].get(r, []), gold["col_paths"].get(c, []))
                 for r in range(H, len(texts)) for c in range(L, len(texts[r]))
                 if label_of(str(texts[r][c] if texts[r][c] is not None else ""))}
        metrics = compare(dec, cells, gold["col_nodes"], gold["row_nodes"], H, L, header_rows=range(H))
        rows.append(_table_result(f.stem, metrics))
    entry: dict[str, Any] = {"gold": str(p), "gold_format": "hitab", "overall": summarise(rows)}
    if per_table:
        entry["per_table"] = rows
    return entry


def dumps(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False, indent=2) + "\n"


GOLD_SOURCE_FORMATS = GOLD_SOURCES


def eval_gold(gold: str | Path, tables: str | Path, *, formats: Iterable[str] = GOLD_SOURCE_FORMATS,
              split: str | None = None, arbiter: Callable[[], Arbiter] | None = None, limit: int | None = None,
              per_table: bool = False) -> dict[str, Any]:
    """Decompose each annotated table's source file(s) and compare with mlx26 gold (see ``gold``).

    ``tables``: the folder holding ``<table>.xlsx`` / ``<table>.html`` (read in place). Per format:
    both-paths, row-only and column-only exact match over cells, tables fully right, unit
    accuracy (cells with a gold unit), H/L accuracy, edge F1, seconds per table, and how often
    the arbiter was consulted and how often it moved off the rule's default.
    """
    import time

    from mlx26.core.table_decompose.gold import load_gold

    folder = Path(tables)
    if not folder.is_dir():
        raise InputError(f"no table folder at {tables}", "--tables names the folder holding the annotated "
                         "tables' .xlsx/.html files")
    golds = load_gold(gold)
    if split is not None:
        golds = [g for g in golds if g.split == split]
        if not golds:
            raise InputError(f"no gold table has split '{split}'", "splits: " + ", ".join(sorted({g.split for g in load_gold(gold)})))
    golds = golds[:limit]
    result: dict[str, Any] = {"gold": str(gold), "gold_format": "mlx26", "tables_dir": str(folder),
                              "split": split or "all", "formats": {}}
    for fmt in formats:
        if fmt not in GOLD_SOURCE_FORMATS:
            raise InputError(f"unknown source format '{fmt}'", "choose xlsx or html")
        rows, seconds, ambiguous, consulted, changed, unit_ok, unit_n = [], 0.0, 0, 0, 0, 0, 0
        for g in golds:
            path = folder / f"{g.table}.{fmt}"
            if not path.is_file():
                others = [f for f in GOLD_SOURCE_FORMATS if f != fmt and (folder / f"{g.table}.{f}").is_file()]
                raise InputError(f"{g.table}: no {path.name} in {folder}",
                                 f"score the other source only: --source {others[0]}" if others else
                                 f"--tables names the folder holding {g.table}.xlsx / {g.table}.html")
            data = path.read_bytes()
            judge = arbiter() if arbiter else Arbiter()
            start = time.perf_counter()
            grid = load_grid(data, fmt=fmt, name=path.name)
            dec = decompose(grid, arbiter=judge)
            seconds += time.perf_counter() - start
            cases = [c for c in dec.cases if c.kind != "span-conflict" or c.arbitrated]
            ambiguous += len(cases)
            consulted += sum(1 for c in cases if c.decided_by in ("llm", "cache", "fallback"))
            changed += sum(1 for c in cases if c.chosen and c.chosen != c.default)
            texts = _sheet_texts(grid)
            r0, c0 = _origin(grid)
            gold_cells = {(r - r0, c - c0): paths for (r, c), paths in g.cells(texts).items()}
            r0 = _origin(grid)[0]
            gold_header = [r - r0 for r in range(g.header_rows[0], g.header_rows[1] + 1)]
            metrics = compare(dec, gold_cells, g.col_nodes(), g.row_nodes(), len(gold_header), g.L,
                              header_rows=gold_header)
            units = {(rec["row"], rec["col"]): label_of(rec.get("unit") or "") for rec in dec.records}
            gold_units = {(r - r0, c - c0): unit for (r, c), unit in g.units.items()}
            for pos in gold_cells:
                if pos in gold_units:
                    unit_n += 1
                    unit_ok += units.get(pos, "") == gold_units[pos]
            entry = _table_result(g.table, metrics)
            entry["split"] = g.split
            rows.append(entry)
        summary = summarise(rows)
        n = len(rows)
        summary["tables_fully_right"] = sum(1 for t in rows if t["cells"] and t["both_match"] == t["cells"])
        summary["unit_accuracy"] = round(unit_ok / unit_n, 4) if unit_n else None
        summary["seconds_per_table"] = round(seconds / n, 5) if n else 0.0
        summary["ambiguous_cases"] = ambiguous
        summary["arbiter_consulted"] = consulted
        summary["arbiter_changed"] = changed
        entry_out: dict[str, Any] = {"overall": summary}
        splits = sorted({t["split"] for t in rows})
        if len(splits) > 1:
            entry_out["by_split"] = {}
            for name in splits:
                part = [t for t in rows if t["split"] == name]
                sub = summarise(part)
                sub["tables_fully_right"] = sum(1 for t in part if t["cells"] and t["both_match"] == t["cells"])
                entry_out["by_split"][name] = sub
        if per_table:
            entry_out["per_table"] = rows
        result["formats"][fmt] = entry_out
    return result


def _origin(grid: Any) -> tuple[int, int]:
    """0-based sheet (row, column) of the grid's top-left slot (XLSX grids are cropped to the used range)."""
    from mlx26.core.table_decompose.gold import cell_index

    ref = (grid.source or {}).get("origin")
    return cell_index(ref) if ref else (0, 0)


def _sheet_texts(grid: Any) -> list[list[str]]:
    """The grid's strings placed at their sheet coordinates (gold is written against the sheet)."""
    r0, c0 = _origin(grid)
    texts = grid.texts()
    return [[""] * (c0 + grid.n_cols) for _ in range(r0)] + [[""] * c0 + row for row in texts]
