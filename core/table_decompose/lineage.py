"""Dual-pathway lineage of data cells, and the text renderings built on it.

Part of the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969): every non-empty data
cell is associated with its root→leaf row path and column path. The record layout and the
``lines`` / ``markdown`` renderings are ours:

* ``lines``: ``row path | column path = value``, paths joined by `` > `` — e.g.
  ``Aged 2 to 8 years > Food alone > 2004 | Total > Mean grams = 53``. For a table without
  row headers whose first column identifies the rows, the row side is ``<key label> = <key>``.
* ``markdown``: one header row (column paths), one row-path column, one line per body row
  that has data — the hierarchy survives flattening.
"""

from __future__ import annotations

from typing import Any

from mlx26.core.table_decompose.cells import label_of
from mlx26.core.table_decompose.grid import EMPTY_SLOT, Grid, typed


def _common(paths: list[list[int]]) -> list[int]:
    if not paths:
        return []
    out = paths[0]
    for p in paths[1:]:
        n = 0
        while n < len(out) and n < len(p) and out[n] == p[n]:
            n += 1
        out = out[:n]
    return out


def lineage_records(grid: Grid, L: int, body_rows: list[int], row_paths: dict[int, list[int]],
                    col_paths: dict[int, list[int]], *, row_dims: list[str], units: dict[int, str],
                    key: dict[int, dict[str, Any]], arbitrated: Any, totals: set[int],
                    row_units: dict[int, dict[int, str]] | None = None) -> list[dict[str, Any]]:
    """One record per non-empty data cell (anchored in a body row and a data column).

    ``units``: per data column, the units annotation of the header; ``row_units``: per body row,
    the units of a units row inside the body above it (they win over the header's).
    """
    row_units = row_units or {}
    cells = grid.cells
    body = set(body_rows)
    # Paths are shared lists per row / column: computed once, not once per cell.
    col_view = {c: ([cells[x].label for x in p], [[cells[x].row, cells[x].col] for x in p]) for c, p in col_paths.items()}
    row_view: dict[int, tuple[list[str], list[list[int]], bool]] = {}
    out: list[dict[str, Any]] = []
    for r in body_rows:
        owner = grid.owner[r]
        rp = row_paths.get(r, [])
        row_view[r] = ([cells[x].label for x in rp], [[cells[x].row, cells[x].col] for x in rp],
                       bool(rp) and rp[-1] in totals)
    for r in body_rows:
        owner = grid.owner[r]
        for c in range(L, grid.n_cols):
            o = owner[c]
            if o == EMPTY_SLOT:
                continue
            cell = cells[o]
            if not cell.label or cell.row != r or cell.col != c:
                continue
            if cell.rowspan == 1:
                row_labels, row_cells, total = row_view[r]
            else:
                rp = _common([row_paths.get(x, []) for x in range(r, cell.last_row + 1) if x in body])
                row_labels, row_cells = [cells[x].label for x in rp], [[cells[x].row, cells[x].col] for x in rp]
                total = bool(rp) and rp[-1] in totals
            if cell.colspan == 1:
                col_labels, col_cells = col_view.get(c, ([], []))
            else:
                cp = _common([col_paths.get(x, []) for x in range(c, min(cell.last_col + 1, grid.n_cols))])
                col_labels, col_cells = [cells[x].label for x in cp], [[cells[x].row, cells[x].col] for x in cp]
            t = typed(cell)
            record: dict[str, Any] = {
                "row": r, "col": c, "text": cell.text, "kind": t.kind, "number": t.number,
                "row_path": row_labels, "col_path": col_labels, "row_cells": row_cells, "col_cells": col_cells,
                "row_dims": row_dims, "total": total,
            }
            unit = row_units[r].get(c) if r in row_units else None
            if unit is None:
                unit = units.get(c)
            if unit:
                record["unit"] = unit
            if r in key:
                if c != 0:
                    record["row_key"] = key[r]
                else:  # the key cell itself: kept as a record (AITQA's gold scores it as data)
                    record["is_key"] = True
            record["arbitrated"] = arbitrated(r, c)
            out.append(record)
    return out


def line(record: dict[str, Any]) -> str:
    """``row path | column path = value`` for one lineage record."""
    row = " > ".join(label_of(x) for x in record["row_path"])
    if not row and record.get("row_key"):
        k = record["row_key"]
        row = f"{label_of(k['label'])} = {label_of(k['value'])}" if k.get("label") else label_of(k["value"])
    col = " > ".join(label_of(x) for x in record["col_path"])
    head = " | ".join(part for part in (row, col) if part)
    value = label_of(record["text"])
    return f"{head} = {value}" if head else value


def _md(text: str) -> str:
    return label_of(text).replace("|", "\\|")


def markdown(grid: Grid, L: int, body_rows: list[int], row_paths: dict[int, list[int]],
             col_paths: dict[int, list[int]], row_dims: list[str], records: list[dict[str, Any]]) -> str:
    """A Markdown table with flattened paths: ``row path | col path 1 | col path 2 | …``."""
    cells = grid.cells
    data_cols = [c for c in range(L, grid.n_cols) if any(rec["col"] == c for rec in records)] if records else []
    by_cell = {(rec["row"], rec["col"]): rec for rec in records}
    stub = " > ".join(row_dims) if row_dims else ""
    header = [stub] + [" > ".join(cells[x].label for x in col_paths.get(c, [])) for c in data_cols]
    lines = ["| " + " | ".join(_md(h) for h in header) + " |", "|" + "---|" * len(header)]
    for r in body_rows:
        values = [by_cell.get((r, c)) for c in data_cols]
        if not any(values):
            continue
        path = " > ".join(cells[x].label for x in row_paths.get(r, []))
        if not path:
            key = next((v["row_key"]["value"] for v in values if v and v.get("row_key")), "")
            path = key
        lines.append("| " + " | ".join([_md(path)] + [_md(v["text"]) if v else "" for v in values]) + " |")
    return "\n".join(lines) + "\n"
