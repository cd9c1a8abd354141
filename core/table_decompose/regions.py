"""Regions of a grid: caption rows, note rows, top header height H and left header width L.

Part of the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969). The abstract names
the regions; the rules are ours:

* **Captions**: leading rows whose single non-empty cell starts at column 0 and either is
  unmerged or spans the full width (a header spanning the data columns starts right of L).
* **Notes**: trailing rows in ``<tfoot>``, or whose single non-empty cell starts at column 0
  and reads like a note (``Note``, ``Source``, ``(a)``, ``*``, ``E use with caution``, …) or
  is long text.
* **H**: scanning down, a row is a header row while it is in ``<thead>``, all ``<th>``, holds
  a horizontal merge in the data area, is a units row, or is not data-like. A row is data-like
  when its data-area cells hold at least one number/placeholder and no more text cells than
  numeric ones (years count for neither). A row whose data area is empty ends the header
  unless vertical merges from the header cover it.
* **L**: leading mostly-text columns of the body (years count as text when the corner above
  the column is empty). A column 0 with its own header label is a row-header column only
  with hierarchy evidence (indentation, section rows, bold, ``<th>``, blanks to forward-fill);
  without it the column is a key attribute (AITQA's convention), reported as ``row_key``. A
  later column with its own header label is a data column. ``<th>`` body cues decide L
  directly when present.

Borderline decisions become arbitration cases (``header-rows``, ``header-cols``,
``units-row``); H and L are iterated to a fixed point because each reads the other's region.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from mlx26.core.common.errors import InputError
from mlx26.core.table_decompose.cells import NUMBER, PLACEHOLDER, TEXT, YEAR, is_unit_label, is_units_only
from mlx26.core.table_decompose.grid import EMPTY_SLOT, Grid, typed

_NOTE_RE = re.compile(
    r"^(notes?\b|sources?\b|symbol legend|footnotes?\b|\(?[a-z0-9]{1,3}\)\s|[a-z0-9]{1,2}\.\s|[*†‡§¹²³⁴⁵⁶⁷⁸⁹]|"
    r"e use with caution|f too unreliable|x suppressed|\.\.\.? not (applicable|available))", re.IGNORECASE)


def reads_like_note(text: str) -> bool:
    """A line that reads like a table note: ``Note``, ``Source``, ``(a)``, ``*``, ``E use with caution``, …"""
    return bool(_NOTE_RE.match(text.strip()))


@dataclass
class Layout:
    """Where the caption, header, body and notes are; ``L`` leading columns are row headers."""

    caption_rows: list[int]
    header_rows: list[int]
    body_rows: list[int]
    note_rows: list[int]
    L: int
    unit_rows: list[int] = field(default_factory=list)  # header rows read as units, kept out of paths
    key_column: bool = False  # L == 0 and column 0 identifies the rows (row_key)
    section_unit_rows: list[int] = field(default_factory=list)  # body rows holding only units (apply below)
    block_rows: list[int] = field(default_factory=list)  # labels over all data columns heading row blocks
    unit_level: bool = False  # units rows also end the column paths (they alone tell columns apart)

    @property
    def H(self) -> int:
        return len(self.header_rows)

    @property
    def table_rows(self) -> list[int]:
        return self.header_rows + self.body_rows


class _Rows:
    """Per-row anchors (non-empty cells whose top row is the row), computed once."""

    def __init__(self, grid: Grid):
        self.grid = grid
        self.profiles: dict[tuple[int, ...], dict[int, str]] = {}
        self.anchors: list[list[int]] = [[] for _ in range(grid.n_rows)]
        for index, cell in enumerate(grid.cells):
            if cell.label:
                self.anchors[cell.row].append(index)
        for ids in self.anchors:
            ids.sort(key=lambda i: grid.cells[i].col)
        self.active = [r for r in range(grid.n_rows)
                       if self.anchors[r] or any(grid.label_at(r, c) for c in range(grid.n_cols))]

    def single(self, r: int) -> int | None:
        """The one non-empty cell of row r when it is anchored there and nothing else is in the row."""
        owners = {k for k in self.grid.owner[r] if k != EMPTY_SLOT and self.grid.cells[k].label}
        if len(owners) == 1:
            k = owners.pop()
            if self.grid.cells[k].row == r:
                return k
        return None


def detect_regions(grid: Grid, *, header_rows: int | None = None, header_cols: int | None = None,
                   decide: Callable[..., str] | None = None) -> Layout:
    """Caption/header/body/note rows and L; ``header_rows``/``header_cols`` override H/L."""
    rows = _Rows(grid)
    active = rows.active
    captions: list[int] = []
    i = 0
    while grid.n_cols > 1 and len(active) - i > 2:
        k = rows.single(active[i])
        cell = grid.cells[k] if k is not None else None
        # A title starts at column 0 alone in its row; agencies merge it over all, part or none of the width.
        if cell is None or cell.col != 0 or (cell.colspan > 1 and cell.rowspan > 1):
            break
        captions.append(active[i])
        i += 1
    notes: list[int] = []
    j = len(active) - 1
    while j > i + 1:
        r = active[j]
        ids = rows.anchors[r]
        if ids and all(grid.cells[x].foot for x in ids):
            notes.append(r)
        else:
            k = rows.single(r)
            cell = grid.cells[k] if k is not None else None
            if cell is None or cell.col != 0 or not (
                    _NOTE_RE.match(cell.label) or len(cell.label) > 80 or cell.colspan > 1 and grid.n_cols > 2):
                break
            notes.append(r)
        j -= 1
    notes.reverse()
    table = active[i:j + 1]
    decide = decide or _rule
    unit_rows: list[int] = []
    if header_rows is not None:
        if header_rows < 0 or header_rows > len(table):
            raise InputError(f"--header-rows {header_rows} is out of range: the table has {len(table)} row(s)")
        H = header_rows
    if header_cols is not None and not 0 <= header_cols <= max(grid.n_cols - 1, 0):
        raise InputError(f"--header-cols {header_cols} is out of range: the table has {grid.n_cols} column(s)",
                         "at least one column must remain for data")
    L = header_cols if header_cols is not None else 0
    key_column = False
    for _ in range(4):  # H and L read each other's regions: iterate to a fixed point
        if header_rows is None:
            H, _ = _scan_header(rows, table, L, None)
        if header_cols is not None:
            break
        new_L, _ = _scan_left(rows, table[:H], table[H:], None)
        if new_L == L:
            break
        L = new_L
    # Decide the borderline cases once, at the fixed point (the arbiter may move H, then L follows).
    if header_rows is None:
        H, unit_rows = _scan_header(rows, table, L, decide)
    if header_cols is None:
        L, key_column = _scan_left(rows, table[:H], table[H:], decide)
    elif L == 0:
        key_column = _is_key_column(rows, table[:H], table[H:])
    header, body = table[:H], table[H:]
    section_units = [r for r in body if _units_row(grid, rows, r, L)] if L else []
    blocks = _block_rows(rows, header, body, L) if header_rows is None else []
    if blocks:
        header = header[1:]
    return Layout(captions, header, [r for r in body if r not in section_units and r not in blocks], notes, L,
                  unit_rows, key_column, section_units, block_rows=blocks)


def _band(rows: _Rows, r: int, L: int) -> int | None:
    """The one labelled cell of row r when it starts at column L and spans every data column."""
    grid = rows.grid
    ids = [x for x in rows.anchors[r] if grid.cells[x].col >= L]
    if len(ids) != 1 or len(rows.anchors[r]) != 1:
        return None
    cell = grid.cells[ids[0]]
    return ids[0] if cell.col == L and cell.last_col == grid.n_cols - 1 and grid.n_cols - L >= 2 else None


def _block_rows(rows: _Rows, header: list[int], body: list[int], L: int) -> list[int]:
    """A top header label over every data column that the body restates as a band row ("2004" … "2015").

    The label then heads the rows above the first band, and each band the rows below it: they
    are row sections written across the data columns, not a column header level.
    """
    if len(header) < 2 or not L or not body:
        return []
    grid = rows.grid
    top = [grid.cells[x] for x in rows.anchors[header[0]] if grid.cells[x].col >= L]
    if len(top) != 1 or top[0].col != L or top[0].last_col != grid.n_cols - 1:
        return []
    bands = [r for r in body if _band(rows, r, L) is not None]
    if not bands or any(typed(grid.cells[rows.anchors[r][0]]).kind != typed(top[0]).kind for r in bands):
        return []
    return [header[0]] + bands


def _units_row(grid: Grid, rows: _Rows, r: int, L: int) -> bool:
    """A body row with no row label whose data cells only name units (a section's "%" or "grams" row)."""
    cells = [grid.cells[x] for x in rows.anchors[r]]
    return bool(cells) and all(c.col >= L and typed(c).kind == TEXT and is_units_only(c.text) for c in cells)


def _rule(*, default: str, **_: object) -> str:
    return default


def _excerpt(grid: Grid, rows: list[int], width: int = 6, limit: int = 4) -> str:
    lines = []
    for r in rows[:limit]:
        cells = [grid.label_at(r, c)[:24] for c in range(min(grid.n_cols, width))]
        lines.append(f"row {r}: | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _column_profile(rows: _Rows, table: list[int]) -> dict[int, str]:
    """Per column, the majority kind of its cells over the table: numeric, year or text."""
    key = tuple(table)
    if key not in rows.profiles:
        rows.profiles[key] = _profile(rows, table)
    return rows.profiles[key]


def _profile(rows: _Rows, table: list[int]) -> dict[int, str]:
    grid = rows.grid
    counts: dict[int, list[int]] = {}
    for r in table:
        for x in rows.anchors[r]:
            cell = grid.cells[x]
            kind = typed(cell).kind
            slot = counts.setdefault(cell.col, [0, 0, 0])
            slot[0 if kind in (NUMBER, PLACEHOLDER) else 1 if kind == YEAR else 2] += 1
    return {c: ("numeric", "year", "text")[max(range(3), key=lambda i: (v[i], -i))] for c, v in counts.items()}


def _implicit_spans(grid: Grid, r: int, L: int) -> list[tuple[int, int]]:
    """Blank-filled spans of a header row: a label and the empty slots right of it (width > 1).

    Only rows with two or more labels over the data columns have them (one lone label followed
    by blanks is a section or caption row, not a spanning header).
    """
    labels = sum(1 for c in range(L, grid.n_cols) if grid.is_anchor(r, c) and grid.label_at(r, c))
    if labels < 2:
        return []
    out, start = [], None
    for c in range(L, grid.n_cols + 1):
        o = grid.owner[r][c] if c < grid.n_cols else -2
        if o == EMPTY_SLOT:
            continue
        if start is not None and c - 1 > start:
            out.append((start, c - 1))
        start = c if c < grid.n_cols and grid.cells[o].label and grid.cells[o].col == c and grid.cells[o].colspan == 1 \
            else None
    return out


def _scan_header(rows: _Rows, table: list[int], L: int, decide: Callable[..., str] | None
                 ) -> tuple[int, list[int]]:
    grid = rows.grid
    has_td = any(not c.header for c in grid.cells if c.label and c.col >= L)
    profile = _column_profile(rows, table)
    typed_cols = {c for c, kind in profile.items() if c >= L and kind != "text"}
    H, forced, borderline, units, units_only = 0, 0, None, [], []
    spans: list[tuple[int, int]] = []  # column ranges of horizontal spans in the header so far
    explicit: list[tuple[int, int]] = []  # ... of those, the merged cells
    for k, r in enumerate(table):
        ids = rows.anchors[r]
        cells = [grid.cells[x] for x in ids]
        if any(c.thead for c in cells):
            H = forced = k + 1
            explicit += [(c.col, c.last_col) for c in cells if c.colspan > 1]
            spans += explicit
            continue
        data = [c for c in cells if c.col >= L]
        if k > 0 and data and len(data) == len(cells) and all(
                typed(c).kind == TEXT and is_units_only(c.text) for c in data):
            units_only.append(r)  # "percent", "'000 kg": metadata under the headers (see decompose)
            H = forced = k + 1
            continue
        informative = [c for c in data if c.col in typed_cols] if typed_cols else data
        if not informative:
            covered = k > 0 and H == k and all(
                (o := grid.owner[r][c]) != EMPTY_SLOT and grid.cells[o].row < r for c in range(L, grid.n_cols))
            if covered:
                H = k + 1
                continue
            break
        if (has_td and all(c.header for c in cells)) or any(c.colspan > 1 for c in data):
            H = forced = k + 1
            explicit += [(c.col, c.last_col) for c in data if c.colspan > 1]
            spans += explicit
            continue
        kinds = [typed(c).kind for c in informative]
        numeric = sum(kind in (NUMBER, PLACEHOLDER) or (kind == YEAR and profile.get(c.col) == "year")
                      for kind, c in zip(kinds, informative, strict=True))
        unit = sum(kind == TEXT and is_unit_label(c.text) for kind, c in zip(kinds, informative, strict=True))
        text = sum(kind == TEXT for kind in kinds) - unit
        if typed_cols:
            text += sum(kind == YEAR and profile.get(c.col) != "year" for kind, c in zip(kinds, informative, strict=True))
        if unit and not numeric and not text and k > 0:
            units.append(r)
            H = forced = k + 1
            continue
        inside = [next((s for s in spans if s[0] <= c.col and c.last_col <= s[1]), None) for c in data]
        under_span = H == k and not numeric and all(inside) and (
            any(s in explicit for s in inside) or any(inside.count(s) > 1 for s in inside))
        if under_span:  # labels right under a horizontal (explicit or blank-filled) span: its sub-headers
            H = forced = k + 1  # strong evidence, like a merge
            spans += _implicit_spans(grid, r, L)
            continue
        if numeric > 0 and numeric >= text:
            if numeric == text:
                borderline = k
            break
        H = k + 1
        spans += _implicit_spans(grid, r, L)
    unit_rows: list[int] = [r for r in units_only if r in table[:H]]
    text_table = H == len(table) and len(table) > 2  # no data-like row
    fallback = max(forced, 1)
    if decide is None:
        return (fallback if text_table else H), unit_rows
    if text_table:
        choice = decide(kind="header-rows", question="No row looks like data (text-only table). How many "
                        "leading rows are the column header?", context=_excerpt(grid, table),
                        options=[(str(fallback), f"the first {fallback} row(s); the rest is data"),
                                 (str(len(table)), "every row: the table has a header and no data")],
                        default=str(fallback))
        return int(choice), unit_rows
    if borderline is not None and borderline == H:
        choice = decide(kind="header-rows", question=f"Row {table[H]} has as many text as numeric cells in the "
                        "data columns. Is it the last header row or the first data row?",
                        context=_excerpt(grid, table[max(H - 2, 0):H + 2]),
                        options=[(str(H), f"row {table[H]} is the first data row (H={H})"),
                                 (str(H + 1), f"row {table[H]} is a header row (H={H + 1})")], default=str(H),
                        rows=(table[0], table[min(H + 1, len(table) - 1)]))
        H = int(choice)
    for r in units:
        if r in table[:H]:
            choice = decide(kind="units-row", question=f"Header row {r} only holds units. Is it part of the "
                            "column paths or a units annotation?", context=_excerpt(grid, [r]),
                            options=[("path", "keep its labels in the column paths"),
                                     ("unit", "keep it out of the paths (recorded as the columns' unit)")],
                            default="path", rows=(r, r))
            if choice == "unit":
                unit_rows.append(r)
    return H, unit_rows


def _own_label(rows: _Rows, header: list[int], c: int) -> bool:
    """A header row holds a label that starts at column c and does not come from a span on its left."""
    grid = rows.grid
    for r in header:
        o = grid.owner[r][c]
        if o != EMPTY_SLOT and grid.cells[o].label and grid.cells[o].col == c:
            return True
    return False


def _corner_spans_header(rows: _Rows, header: list[int], c: int) -> bool:
    """Column c's header label is one cell merged down the whole (multi-row) header: a row-dimension name.

    Agencies label their row-header columns this way ("Province", "Sex", "Age group"); a data
    column's label sits in the header rows beside the other column labels instead.
    """
    if len(header) < 2:
        return False
    cell = rows.grid.cell_at(header[0], c)
    return bool(cell and cell.label and cell.col == c and cell.colspan == 1 and cell.row <= header[0]
                and cell.last_row >= header[-1])


def _numbers_right_of(rows: _Rows, body: list[int], c: int) -> bool:
    """Most body cells right of column c are numbers or placeholders: c sits left of a statistical body."""
    numeric = total = 0
    for r in body:
        for x in rows.anchors[r]:
            cell = rows.grid.cells[x]
            if cell.col > c:
                total += 1
                numeric += typed(cell).kind in (NUMBER, PLACEHOLDER)
    return total > 0 and 2 * numeric >= total


def _is_ordinal(rows: _Rows, body: list[int], c: int) -> bool:
    """Column c of the body counts 1, 2, 3, … down the rows (a rank or sequence number)."""
    values = []
    for r in body:
        cell = rows.grid.cell_at(r, c)
        if cell is None or not cell.label or cell.row != r:
            continue
        t = typed(cell)
        if t.kind != NUMBER or not isinstance(t.number, int):
            return False
        values.append(t.number)
    return len(values) >= 3 and values == list(range(values[0], values[0] + len(values)))


def _hierarchy_evidence(rows: _Rows, body: list[int], L: int = 1) -> bool:
    """Column 0 of the body shows a row hierarchy: indents, section rows, bold, <th>, merges or blanks."""
    grid = rows.grid
    indents: set[float] = set()
    for r in body:
        o = grid.owner[r][0]
        cell = grid.cells[o] if o != EMPTY_SLOT else None
        data = any(grid.label_at(r, c) and grid.cells[grid.owner[r][c]].col >= L for c in range(L, grid.n_cols))
        if cell is None or not cell.label:
            if data and grid.n_cols > 2 and typed_text(rows, r, 1):
                return True  # a blank to forward-fill from above
            continue
        if cell.row != r:
            return True  # a vertical merge in the row header
        indents.add(round(cell.indent, 3))
        if cell.bold or (cell.header and data) or not data:
            return True
    return len(indents) > 1


def _blank_filled_left(rows: _Rows, body: list[int], c: int) -> bool:
    """Column c-1 (a row-header column) is blank beside a text label in column c, with data to the right.

    The blank can only be forward-filled from above when column c is a row-header column too
    (the filled label is the parent of column c's label): "Males, 15-24 | …" then ", 25-54 | …".
    """
    grid = rows.grid
    for r in body:
        o = grid.owner[r][c - 1]
        if o != EMPTY_SLOT and grid.cells[o].label:
            continue
        data = any(grid.label_at(r, k) and grid.cells[grid.owner[r][k]].col > c for k in range(c + 1, grid.n_cols))
        if data and typed_text(rows, r, c):
            return True
    return False


def typed_text(rows: _Rows, r: int, c: int) -> bool:
    cell = rows.grid.cell_at(r, c)
    return bool(cell and cell.label and cell.col == c and typed(cell).kind == TEXT)


def _column_kinds(rows: _Rows, body: list[int], c: int) -> tuple[int, int, int]:
    grid = rows.grid
    text = year = numeric = 0
    for r in body:
        o = grid.owner[r][c]
        if o == EMPTY_SLOT:
            continue
        cell = grid.cells[o]
        if not cell.label or cell.row != r or cell.col != c:
            continue
        kind = typed(cell).kind
        text += kind == TEXT
        year += kind == YEAR
        numeric += kind in (NUMBER, PLACEHOLDER)
    return text, year, numeric


def _th_width(rows: _Rows, body: list[int]) -> int | None:
    """L from <th> cues: the leading columns whose body cells are <th> beside <td> data."""
    grid = rows.grid
    widths, with_data = [], 0
    for r in body:
        cells = [grid.cells[x] for x in rows.anchors[r]]
        if not any(not c.header for c in cells):
            continue
        with_data += 1
        if not any(c.header for c in cells):
            continue
        width = 0
        for c in range(grid.n_cols):
            o = grid.owner[r][c]
            if o == EMPTY_SLOT or not grid.cells[o].label:
                continue  # a blank slot: count it only if a <th> follows
            if not grid.cells[o].header:
                break
            width = grid.cells[o].last_col + 1
        widths.append(width)
    if not widths or len(widths) * 2 < with_data:
        return None
    return max(set(widths), key=lambda w: (widths.count(w), w))


def _is_key_column(rows: _Rows, header: list[int], body: list[int]) -> bool:
    """Column 0 of a table without row headers identifies its rows (text or years, mostly unique)."""
    grid = rows.grid
    if grid.n_cols < 2 or not body:
        return False
    values = [grid.label_at(r, 0) for r in body]
    present = [v for v in values if v]
    numeric = _column_kinds(rows, body, 0)[2]
    return len(present) >= max(1, len(body) // 2) and numeric == 0 and len(set(present)) >= 0.9 * len(present)


def _scan_left(rows: _Rows, header: list[int], body: list[int], decide: Callable[..., str] | None
               ) -> tuple[int, bool]:
    grid = rows.grid
    max_L = grid.n_cols - 1
    if max_L < 1 or not body:
        return 0, False
    th = _th_width(rows, body)
    if th is not None:
        return min(th, max_L), False
    L = 0
    for c in range(max_L):
        text, year, numeric = _column_kinds(rows, body, c)
        labelled = _own_label(rows, header, c)
        if c == L and labelled and _corner_spans_header(rows, header, c) and _is_ordinal(rows, body, c) \
                and c + 1 < max_L and _corner_spans_header(rows, header, c + 1):
            L = c + 1  # a "Rank" / "No." column before a labelled row-header column: part of the row key
            continue
        if text + year == 0 or text + year < numeric or (text == 0 and labelled):
            break
        if labelled:
            evidence = (c == 0 and _hierarchy_evidence(rows, body)) or (
                c == L and _corner_spans_header(rows, header, c) and _numbers_right_of(rows, body, c)) or (
                c == L and c > 0 and _blank_filled_left(rows, body, c))
            default = str(c + 1) if evidence else str(c)
            if decide is None:
                choice = default
            else:
                name = grid.label_at(header[-1], c) if header else ""
                choice = decide(kind="header-cols", question=f"Column {c} holds text and has its own header "
                                f"label '{name[:40]}'. Is it a row-header column or a data column?",
                                context=_excerpt(grid, header[-1:] + body[:3]),
                                options=[(str(c), f"a data column (L={c})"), (str(c + 1), f"a row-header column (L={c + 1})")],
                                default=default)
            if choice == str(c):
                break
        L = c + 1
    key = L == 0 and _is_key_column(rows, header, body)
    return L, key
