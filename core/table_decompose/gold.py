"""mlx26 gold: hand-annotated row and column header paths of a published table, per cell.

Part of the evaluation of our reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969). The
format is ours, in the spirit of HiTab's trees (Cheng et al., ACL 2022) but written against
the *source file* (XLSX or HTML with the same coordinates), so that gold for a real table can
be written by hand and scored on the original layout rather than on a re-rendering. One JSON
object per table:

``table`` (file stem), ``split`` (``tune`` / ``heldout``), ``header_rows`` ([first, last]
1-based sheet rows of the column header block), ``row_header_cols`` (letters), ``row_dims``
(corner labels naming row-header columns), ``columns`` (data column letter → column path,
root → leaf), ``rows`` (1-based data row → row path), optional ``units`` (A1 range → unit)
and optional ``cells`` (A1 → ``{"row": [...], "col": [...]}``) for a cell whose paths differ
from its row's and column's. The gold data cells are the non-empty cells of ``rows`` ×
``columns``. The tree nodes (for edge F1) are the prefixes of the paths.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.table_decompose.cells import label_of

_A1 = re.compile(r"^([A-Z]{1,3})([1-9][0-9]*)$")
_REQUIRED = ("table", "header_rows", "row_header_cols", "columns", "rows")


def column_index(letters: str) -> int:
    """0-based column of spreadsheet letters (``A`` → 0, ``AA`` → 26)."""
    if not letters or not letters.isalpha() or not letters.isupper():
        raise InputError(f"'{letters}' is not a column name (A, B, …, AA)")
    value = 0
    for ch in letters:
        value = value * 26 + ord(ch) - 64
    return value - 1


def cell_index(a1: str) -> tuple[int, int]:
    """0-based (row, column) of an A1 reference."""
    m = _A1.match(a1.strip())
    if not m:
        raise InputError(f"'{a1}' is not an A1 cell reference")
    return int(m.group(2)) - 1, column_index(m.group(1))


def range_cells(ref: str) -> list[tuple[int, int]]:
    """0-based slots of ``B7`` or ``B7:G13``."""
    first, _, last = ref.partition(":")
    r0, c0 = cell_index(first)
    r1, c1 = cell_index(last) if last else (r0, c0)
    return [(r, c) for r in range(min(r0, r1), max(r0, r1) + 1) for c in range(min(c0, c1), max(c0, c1) + 1)]


@dataclass
class GoldTable:
    """One annotated table: 0-based header block, row-header width and paths per row / column."""

    table: str
    split: str
    H: int  # header rows counted from the first header row (title rows excluded)
    L: int
    header_rows: tuple[int, int]  # 0-based, inclusive
    row_dims: list[str]
    col_paths: dict[int, list[str]]
    row_paths: dict[int, list[str]]
    units: dict[tuple[int, int], str] = field(default_factory=dict)
    cell_paths: dict[tuple[int, int], tuple[list[str], list[str]]] = field(default_factory=dict)

    def cells(self, texts: list[list[str]]) -> dict[tuple[int, int], tuple[list[str], list[str]]]:
        """Gold (row path, column path) of every non-empty data cell of the source matrix."""
        out = {}
        for r, row_path in self.row_paths.items():
            for c, col_path in self.col_paths.items():
                if r < len(texts) and c < len(texts[r]) and label_of(texts[r][c] or ""):
                    out[(r, c)] = self.cell_paths.get((r, c), (row_path, col_path))
        return out

    def col_nodes(self) -> set[tuple[str, ...]]:
        return {tuple(p[:k]) for p in self.col_paths.values() for k in range(1, len(p) + 1)}

    def row_nodes(self) -> set[tuple[str, ...]]:
        return {tuple(p[:k]) for p in self.row_paths.values() for k in range(1, len(p) + 1)}


def _labels(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise InputError(f"{where} must be a list of labels")
    return [label_of(x) for x in value]


def parse_gold(data: Any, name: str) -> GoldTable:
    """Validate one gold object (see the module docstring) into a :class:`GoldTable`."""
    if not isinstance(data, dict):
        raise InputError(f"{name}: a gold table is a JSON object")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise InputError(f"{name}: gold table lacks '{missing[0]}'", "keys: " + ", ".join(_REQUIRED))
    rows = data["header_rows"]
    if not (isinstance(rows, list) and len(rows) == 2 and all(isinstance(x, int) and x >= 1 for x in rows)):
        raise InputError(f"{name}: header_rows must be [first, last] 1-based rows")
    first, last = rows[0] - 1, rows[1] - 1
    letters = data["row_header_cols"]
    if not isinstance(letters, list):
        raise InputError(f"{name}: row_header_cols must be a list of column letters")
    cols = [column_index(x) for x in letters]
    if cols != list(range(len(cols))):
        raise InputError(f"{name}: row_header_cols must be the leading columns (A, B, …)")
    col_paths = {column_index(k): _labels(v, f"{name}: columns[{k}]") for k, v in data["columns"].items()}
    row_paths = {}
    for k, v in data["rows"].items():
        if not str(k).isdigit() or int(k) < 1:
            raise InputError(f"{name}: rows key '{k}' is not a 1-based row number")
        row_paths[int(k) - 1] = _labels(v, f"{name}: rows[{k}]")
    units = {slot: label_of(str(unit)) for ref, unit in (data.get("units") or {}).items() for slot in range_cells(ref)}
    cell_paths = {}
    for ref, paths in (data.get("cells") or {}).items():
        cell_paths[cell_index(ref)] = (_labels(paths.get("row", []), f"{name}: cells[{ref}].row"),
                                       _labels(paths.get("col", []), f"{name}: cells[{ref}].col"))
    return GoldTable(str(data["table"]), str(data.get("split", "tune")), last - first + 1, len(cols), (first, last),
                     _labels(data.get("row_dims", []), f"{name}: row_dims"), col_paths, row_paths, units, cell_paths)


def load_gold(path: str | Path) -> list[GoldTable]:
    """Every gold table of a ``.json`` file or a folder of them, sorted by table name (natural order)."""
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("*.json"))
    elif p.is_file():
        files = [p]
    else:
        raise InputError(f"no gold at {path}", "give a gold .json file or a folder of them")
    if not files:
        raise InputError(f"no gold .json files in {path}")
    out = []
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"{f.name} line {exc.lineno}: invalid JSON ({exc.msg})") from exc
        out.append(parse_gold(data, f.name))
    return sorted(out, key=lambda g: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", g.table)])
