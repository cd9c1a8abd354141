"""The decomposition pipeline: regions → column tree ⟂ row tree → lineage.

Reconstruction of Cao et al., "Orthogonal Hierarchical Decomposition for Structure-Aware
Table Understanding with LLMs" (ICML 2026, arXiv 2602.01969). Only the abstract is public:
Orthogonal Tree Induction (a column tree and a row tree induced independently) and
dual-pathway association (each data cell linked to its row path and its column path) are
the paper's ideas; every rule that realises them here is ours (see regions, coltree,
rowtree, lineage). The optional LLM arbitration of ambiguous decisions follows the paper's
description at the level of the abstract; the protocol is in ``arbiter``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlx26.core.table_decompose.arbiter import Arbiter, Case
from mlx26.core.table_decompose.cells import is_units_only, row_label_unit, same_unit
from mlx26.core.table_decompose.coltree import column_tree, unit_labels
from mlx26.core.table_decompose.grid import Grid
from mlx26.core.table_decompose.lineage import line, lineage_records, markdown
from mlx26.core.table_decompose.regions import Layout, detect_regions
from mlx26.core.table_decompose.rowtree import row_tree
from mlx26.core.table_decompose.trees import Tree


@dataclass
class Decomposition:
    """Regions, the two trees, per-row / per-column paths, lineage records and the audit trail."""

    grid: Grid
    layout: Layout
    col_tree: Tree
    row_tree: Tree
    col_paths: dict[int, list[int]]
    row_paths: dict[int, list[int]]
    row_dims: list[str]
    records: list[dict[str, Any]]
    cases: list[Case]
    warnings: list[str]
    arbiter: str

    @property
    def empty(self) -> bool:
        return not self.records

    def lines(self) -> list[str]:
        return [line(rec) for rec in self.records]

    def markdown(self) -> str:
        return markdown(self.grid, self.layout.L, self.layout.body_rows, self.row_paths, self.col_paths,
                        self.row_dims, self.records)

    def notes(self) -> list[str]:
        g = self.grid
        return [" ".join(g.label_at(r, c) for c in range(g.n_cols) if g.is_anchor(r, c) and g.label_at(r, c))
                for r in self.layout.note_rows]

    def captions(self) -> list[str]:
        g = self.grid
        rows = [" ".join(g.label_at(r, c) for c in range(g.n_cols) if g.is_anchor(r, c) and g.label_at(r, c))
                for r in self.layout.caption_rows]
        return g.caption + rows

    def trees(self) -> dict[str, Any]:
        """The column tree, the row tree, the regions and the audit trail as one JSON object."""
        lay = self.layout
        return {
            "source": self.grid.source,
            "shape": [self.grid.n_rows, self.grid.n_cols],
            "caption": self.captions(),
            "notes": self.notes(),
            "header_rows": lay.H,
            "header_cols": lay.L,
            "regions": {"caption_rows": lay.caption_rows, "header_rows": lay.header_rows,
                        "body_rows": lay.body_rows, "note_rows": lay.note_rows, "unit_rows": lay.unit_rows,
                        "data_cols": [lay.L, self.grid.n_cols - 1] if self.grid.n_cols > lay.L else []},
            "row_dims": self.row_dims,
            "key_column": lay.key_column,
            "column_tree": self.col_tree.to_json(row_tree=False),
            "row_tree": self.row_tree.to_json(row_tree=True),
            "data_cells": len(self.records),
            "arbiter": self.arbiter,
            "cases": [c.to_dict() for c in self.cases],
            "warnings": self.warnings,
            "hidden": self.grid.hidden,
        }

    def hitab(self) -> dict[str, Any]:
        """HiTab/TUTA table JSON: texts, merged_regions, top_root, left_root, header counts."""
        lay, g = self.layout, self.grid
        rows = lay.header_rows + lay.body_rows
        if not rows:
            return {"title": " ".join(self.captions()), "texts": [], "merged_regions": [],
                    "top_root": Tree().to_hitab(0), "left_root": Tree().to_hitab(0),
                    "top_header_rows_num": 0, "left_header_columns_num": lay.L, "notes": self.notes()}
        first, last = min(rows), max(rows)
        texts = [row[:] for row in g.texts()[first:last + 1]]
        merged = [{"first_row": c.row - first, "last_row": min(c.last_row, last) - first, "first_column": c.col,
                   "last_column": c.last_col} for c in g.cells
                  if (c.rowspan > 1 or c.colspan > 1) and first <= c.row <= last]
        top = (max(lay.header_rows) - first + 1) if lay.header_rows else 0
        # mlx26 extension: the layout cues HiTab's matrix cannot hold (read back by ``read_hitab``).
        styles = [{"row": c.row - first, "column": c.col, "indent": c.indent, "bold": c.bold}
                  for c in g.cells if (c.indent or c.bold) and first <= c.row <= last]
        return {"title": " ".join(self.captions()), "texts": texts, "merged_regions": merged,
                "top_root": self.col_tree.to_hitab(first), "left_root": self.row_tree.to_hitab(first),
                "top_header_rows_num": top, "left_header_columns_num": lay.L, "notes": self.notes(),
                "cell_styles": styles}


def decompose(grid: Grid, *, header_rows: int | None = None, header_cols: int | None = None,
              arbiter: Arbiter | None = None) -> Decomposition:
    """Decompose a grid: regions, column tree, row tree and the lineage of every data cell."""
    arbiter = arbiter or Arbiter()
    warnings = list(grid.warnings)
    layout = detect_regions(grid, header_rows=header_rows, header_cols=header_cols, decide=arbiter.decide)
    col_tree, col_paths = column_tree(grid, layout, warnings)
    _units_as_level(grid, layout, col_paths)
    rtree, row_paths = row_tree(grid, layout, arbiter.decide, warnings)
    row_dims = _row_dims(grid, layout)
    key = _keys(grid, layout)
    cases = list(grid.cases) + list(arbiter.cases)
    decided = [c for c in cases if c.arbitrated]

    def arbitrated(r: int, c: int) -> bool:
        return any(case.covers(r, c) for case in decided) if decided else False

    units = unit_labels(grid, layout)
    row_units = _section_units(grid, layout)
    _row_label_units(grid, layout, row_paths, units, row_units)
    records = lineage_records(grid, layout.L, layout.body_rows, row_paths, col_paths, row_dims=row_dims,
                              units=units, key=key, arbitrated=arbitrated,
                              totals={n.id for n in rtree.nodes.values() if n.total},
                              row_units=row_units)
    return Decomposition(grid, layout, col_tree, rtree, col_paths, row_paths, row_dims, records, cases, warnings,
                         arbiter.name)


def _units_as_level(grid: Grid, layout: Layout, col_paths: dict[int, list[int]]) -> None:
    """Units rows are metadata, unless they alone tell two columns apart: then they end those paths.

    A units row merged over several columns may cross the boundaries of the headers above it,
    so it cannot be a tree node; it is appended to each column's path (and stays the unit).
    """
    strict = [r for r in layout.unit_rows
              if all(is_units_only(grid.cells[x].text) for x in {grid.owner[r][c] for c in range(grid.n_cols)}
                     if x != -1 and grid.cells[x].label and grid.cells[x].row == r)]
    if not strict:
        return
    units = unit_labels(grid, layout)
    seen: dict[tuple[str, ...], int] = {}
    distinct = False
    for c in sorted(col_paths):
        labels = tuple(grid.cells[x].label for x in col_paths[c])
        if labels in seen and units.get(seen[labels]) != units.get(c):
            distinct = True
            break
        seen.setdefault(labels, c)
    if not distinct:
        return
    layout.unit_level = True
    for c, path in col_paths.items():
        for r in strict:
            o = grid.owner[r][c]
            if o != -1 and grid.cells[o].label and o not in path:
                path.append(o)


def _section_units(grid: Grid, layout: Layout) -> dict[int, dict[int, str]]:
    """Per body row, the units of the nearest units row above it inside the body."""
    if not layout.section_unit_rows:
        return {}
    marks = set(layout.section_unit_rows)
    out: dict[int, dict[int, str]] = {}
    current: dict[int, str] = {}
    for r in sorted(set(layout.body_rows) | marks):
        if r in marks:
            current = {c: grid.label_at(r, c) for c in range(layout.L, grid.n_cols) if grid.label_at(r, c)}
        elif current:
            out[r] = current
    return out


def _row_label_units(grid: Grid, layout: Layout, row_paths: dict[int, list[int]], units: dict[int, str],
                     row_units: dict[int, dict[int, str]]) -> None:
    """A row whose label names another unit than the header's units row keeps its own (in place).

    "% Difference" under a "thousand of acres" units row is in percent: the deepest label of the
    row path that names a unit (``cells.row_label_unit``: a ``%`` sign or percent word, or a
    label that is only a unit) replaces the header unit of that row's cells. A label without a
    unit word ("Difference", "Change") keeps the header unit. Units rows inside the body win.
    """
    if not units:
        return
    for r in layout.body_rows:
        if r in row_units:
            continue
        own = next((u for x in reversed(row_paths.get(r, [])) if (u := row_label_unit(grid.cells[x].label))), None)
        if own is None:
            continue
        override = {c: own for c, unit in units.items() if not same_unit(own, unit)}
        if override:
            row_units[r] = override


def _row_dims(grid: Grid, layout: Layout) -> list[str]:
    """Corner labels (header rows, columns left of L, not spanning data columns): row-dimension names.

    The top header row that became a row-block label (``regions._block_rows``) keeps its corner
    labels: they still name the row dimensions.
    """
    out: list[str] = []
    first = min(layout.header_rows + layout.body_rows, default=0)
    for r in sorted(set(layout.header_rows) | {b for b in layout.block_rows if b < first}):
        for c in range(layout.L):
            cell = grid.cell_at(r, c)
            if cell and cell.label and cell.row == r and cell.col == c and cell.last_col < layout.L:
                out.append(cell.label)
    return out


def _keys(grid: Grid, layout: Layout) -> dict[int, dict[str, Any]]:
    """For a table without row headers whose column 0 identifies the rows: its label and value per row."""
    if not layout.key_column:
        return {}
    name = ""
    for r in reversed(layout.header_rows):
        if grid.label_at(r, 0):
            name = grid.label_at(r, 0)
            break
    out = {}
    for r in layout.body_rows:
        value = grid.label_at(r, 0)
        if value:
            out[r] = {"label": name, "value": value, "cell": [r, 0]}
    return out


def decompose_bytes(data: bytes, *, fmt: str = "auto", name: str = "input", sheet: str | None = None,
                    table_index: int | None = None, strict: bool = False, header_rows: int | None = None,
                    header_cols: int | None = None, arbiter: Arbiter | None = None,
                    notices: list[str] | None = None, cell_range: str | None = None) -> Decomposition:
    """Read one table from bytes (see ``load.load_grid``) and decompose it with one arbiter."""
    from mlx26.core.table_decompose.load import load_grid

    arbiter = arbiter or Arbiter()
    grid = load_grid(data, fmt=fmt, name=name, sheet=sheet, table_index=table_index, strict=strict,
                     decide=arbiter.decide, notices=notices, cell_range=cell_range)
    grid.cases = list(arbiter.cases)  # span conflicts decided while reading
    arbiter.cases.clear()
    return decompose(grid, header_rows=header_rows, header_cols=header_cols, arbiter=arbiter)
