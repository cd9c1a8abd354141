"""The normalised grid every input format is turned into: cells with spans and layout cues.

Part of the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969); the grid model is
ours. A :class:`Cell` is an anchor (its top-left slot) with ``rowspan``/``colspan``, the
original string, an indentation amount in em, and the cues bold / ``<th>`` / ``<thead>`` /
``<tfoot>``. :func:`build_grid` places cells on slots in reading order; two cells that claim
the same slot are an overlapping merge: an error under ``strict``, else an arbitration case
(which cell keeps the overlap; the rule: the earlier one) and the other cell is clipped.
A cell whose anchor slot is taken is kept in ``Grid.hidden`` with its text, so no original
string is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.table_decompose.cells import Typed, label_of, parse_cell

EMPTY_SLOT = -1


@dataclass(slots=True)
class Cell:
    """One anchor cell: position, spans, original string and layout cues."""

    row: int
    col: int
    text: str = ""
    rowspan: int = 1
    colspan: int = 1
    indent: float = 0.0  # em; leading padding characters count 0.5 em each
    bold: bool = False
    header: bool = False  # <th> / a header cue from the source
    thead: bool = False  # in <thead>
    foot: bool = False  # in <tfoot>
    label: str = ""
    typed: Typed | None = None

    def __post_init__(self) -> None:
        self.label = label_of(self.text)

    @property
    def last_row(self) -> int:
        return self.row + self.rowspan - 1

    @property
    def last_col(self) -> int:
        return self.col + self.colspan - 1

    def a1(self) -> str:
        return a1_range(self.row, self.col, self.last_row, self.last_col)


def column_letters(col: int) -> str:
    letters = ""
    col += 1
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def a1_range(r0: int, c0: int, r1: int, c1: int) -> str:
    """Spreadsheet notation of a range (0-based inclusive bounds): ``B2`` or ``B2:C3``."""
    first = f"{column_letters(c0)}{r0 + 1}"
    return first if (r0, c0) == (r1, c1) else f"{first}:{column_letters(c1)}{r1 + 1}"


@dataclass
class Grid:
    """Cells on an ``n_rows × n_cols`` slot matrix; ``owner[r][c]`` indexes ``cells`` or is -1."""

    n_rows: int
    n_cols: int
    cells: list[Cell]
    owner: list[list[int]]
    caption: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    hidden: list[dict[str, Any]] = field(default_factory=list)
    cases: list[Any] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)

    def cell_at(self, r: int, c: int) -> Cell | None:
        k = self.owner[r][c]
        return None if k == EMPTY_SLOT else self.cells[k]

    def label_at(self, r: int, c: int) -> str:
        k = self.owner[r][c]
        return "" if k == EMPTY_SLOT else self.cells[k].label

    def is_anchor(self, r: int, c: int) -> bool:
        k = self.owner[r][c]
        return k != EMPTY_SLOT and self.cells[k].row == r and self.cells[k].col == c

    def texts(self) -> list[list[str]]:
        """The matrix of original strings, merged cells written only in their anchor slot."""
        out = [[""] * self.n_cols for _ in range(self.n_rows)]
        for cell in self.cells:
            out[cell.row][cell.col] = cell.text
        return out


def _clip(cell: Cell, forbidden: set[tuple[int, int]]) -> bool:
    """Shrink ``cell`` to the largest rectangle at its anchor that avoids ``forbidden``.

    Returns False when the anchor slot itself is forbidden (the cell cannot be placed).
    """
    inside = [(r, c) for r, c in forbidden
              if cell.row <= r <= cell.last_row and cell.col <= c <= cell.last_col]
    if not inside:
        return True
    if (cell.row, cell.col) in forbidden:
        return False
    cols = min((c - cell.col for _, c in inside if c > cell.col), default=None)
    rows = min((r - cell.row for r, _ in inside if r > cell.row), default=None)
    # Clipping columns is valid only when every forbidden slot lies right of the anchor column, etc.
    by_cols = cols if cols is not None and all(c > cell.col for _, c in inside) else None
    by_rows = rows if rows is not None and all(r > cell.row for r, _ in inside) else None
    if by_cols is not None and (by_rows is None or by_cols * cell.rowspan >= by_rows * cell.colspan):
        cell.colspan = by_cols
    elif by_rows is not None:
        cell.rowspan = by_rows
    else:  # forbidden slots both below and right of the anchor: keep the anchor row and the free prefix
        cell.rowspan = 1
        cell.colspan = min(c - cell.col for r, c in inside if r == cell.row) if any(
            r == cell.row for r, _ in inside) else cell.colspan
    return True


def _slots(cell: Cell) -> list[tuple[int, int]]:
    return [(r, c) for r in range(cell.row, cell.last_row + 1) for c in range(cell.col, cell.last_col + 1)]


def build_grid(cells: list[Cell], *, n_rows: int | None = None, n_cols: int | None = None, strict: bool = False,
               decide: Callable[..., str] | None = None, warnings: list[str] | None = None,
               ragged_warning: bool = True) -> Grid:
    """Place ``cells`` (reading order) on a slot matrix, resolving overlapping merges.

    ``decide(kind=..., question=..., context=..., options=[(id, description)], default=id,
    rows=..., cols=...)`` is the arbitration hook (see ``arbiter``); without it the rule applies.
    """
    warnings = [] if warnings is None else warnings
    rows = max([c.last_row + 1 for c in cells], default=0)
    cols = max([c.last_col + 1 for c in cells], default=0)
    n_rows = max(rows, n_rows or 0)
    n_cols = max(cols, n_cols or 0)
    owner = [[EMPTY_SLOT] * n_cols for _ in range(n_rows)]
    placed: list[Cell] = []
    hidden: list[dict[str, Any]] = []
    for cell in cells:
        if cell.rowspan == 1 and cell.colspan == 1:
            k = owner[cell.row][cell.col]
            if k == EMPTY_SLOT:
                if cell.label or cell.text:
                    owner[cell.row][cell.col] = len(placed)
                    placed.append(cell)
                continue
        if not (cell.label or cell.text) and cell.rowspan == 1 and cell.colspan == 1:
            continue
        alive = _resolve_overlaps(cell, owner, placed, strict, decide, warnings)
        if not alive:
            if cell.text.strip():
                hidden.append({"cell": cell.a1(), "text": cell.text})
                warnings.append(f"cell {cell.a1()} ('{cell.label[:40]}') is covered by another merged cell; "
                                "its text is kept under 'hidden'")
            continue
        index = len(placed)
        placed.append(cell)
        for r, c in _slots(cell):
            owner[r][c] = index
    # Cells clipped to nothing by a later winner are dropped from the matrix but kept as hidden.
    final: list[Cell] = []
    remap: dict[int, int] = {}
    for old, cell in enumerate(placed):
        if owner[cell.row][cell.col] == old:
            remap[old] = len(final)
            final.append(cell)
        elif cell.text.strip():
            hidden.append({"cell": cell.a1(), "text": cell.text})
    for r in range(n_rows):
        row = owner[r]
        for c in range(n_cols):
            if row[c] != EMPTY_SLOT:
                row[c] = remap.get(row[c], EMPTY_SLOT)
    if ragged_warning:
        _warn_ragged(cells, n_cols, warnings)
    return Grid(n_rows, n_cols, final, owner, warnings=warnings, hidden=hidden)


def _resolve_overlaps(cell: Cell, owner: list[list[int]], placed: list[Cell], strict: bool,
                      decide: Callable[..., str] | None, warnings: list[str]) -> bool:
    """Make ``cell``'s rectangle free, clipping it or the cells it overlaps. False: cannot place it."""
    for _ in range(64):  # each round removes at least one conflicting owner
        taken = {owner[r][c] for r, c in _slots(cell) if owner[r][c] != EMPTY_SLOT}
        if not taken:
            return True
        other_index = min(taken)
        other = placed[other_index]
        if strict:
            raise InputError(f"overlapping merged cells {other.a1()} ('{other.label[:30]}') and {cell.a1()} "
                             f"('{cell.label[:30]}')", "fix the spans, or drop --strict to clip the later one")
        options = [("first", f"{other.a1()} keeps the overlap; {cell.a1()} is clipped"),
                   ("second", f"{cell.a1()} keeps the overlap; {other.a1()} is clipped")]
        context = f"'{other.label[:60]}' at {other.a1()} and '{cell.label[:60]}' at {cell.a1()} overlap"
        choice = "first"
        if decide is not None:
            choice = decide(kind="span-conflict", question="Two merged cells overlap. Which keeps the shared slots?",
                            context=context, options=options, default="first",
                            rows=(min(cell.row, other.row), max(cell.last_row, other.last_row)),
                            cols=(min(cell.col, other.col), max(cell.last_col, other.last_col)))
        warnings.append(f"overlapping merged cells {other.a1()} and {cell.a1()}: "
                        f"{'the later' if choice == 'first' else 'the earlier'} one is clipped")
        if choice == "first":
            forbidden = {(r, c) for r, c in _slots(cell) if owner[r][c] != EMPTY_SLOT}
            if not _clip(cell, forbidden):
                return False
        else:
            mine = set(_slots(cell))
            for r, c in _slots(other):
                owner[r][c] = EMPTY_SLOT
            if _clip(other, mine):
                for r, c in _slots(other):
                    owner[r][c] = other_index
    return False


def _warn_ragged(cells: list[Cell], n_cols: int, warnings: list[str]) -> None:
    rows = max((c.row + c.rowspan for c in cells), default=0)
    width = [0] * rows
    for cell in cells:
        end = cell.col + cell.colspan
        for r in range(cell.row, cell.row + cell.rowspan):
            if width[r] < end:
                width[r] = end
    short = [r for r, w in enumerate(width) if 0 < w < n_cols]
    if short:
        warnings.append(f"ragged rows: {len(short)} row(s) have fewer than {n_cols} cells (first: row {short[0] + 1}); "
                        "padded with empty cells")


def from_matrix(rows: list[list[str]], *, indents: list[list[float]] | None = None) -> list[Cell]:
    """1×1 cells from a matrix of strings (CSV, TSV, Markdown); indentation from leading padding."""
    from mlx26.core.table_decompose.cells import leading_pad

    out: list[Cell] = []
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            if not text:
                continue
            indent = indents[r][c] if indents else leading_pad(text) * 0.5
            out.append(Cell(r, c, text, indent=indent))
    return out


def typed(cell: Cell) -> Typed:
    if cell.typed is None:
        cell.typed = parse_cell(cell.text)
    return cell.typed
