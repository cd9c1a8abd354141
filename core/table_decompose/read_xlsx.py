"""XLSX worksheets → grids via openpyxl: merged ranges, indentation, bold, number formats.

Part of the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969); the reader is ours.
A cell's original string is what Excel shows: numbers are rendered through their number
format (thousands separators, decimals, percent, currency, parenthesised negatives, literal
text) by :func:`format_value`; cached formula results are read (``data_only``). Indentation
is ``alignment.indent`` (1 em per level) plus leading spaces; bold is ``font.b``. The sheet is
cropped to its used range. Legacy ``.xls`` and password-protected (encrypted) workbooks are
OLE2 files, not zip archives: both are refused with a message saying which one it is.
"""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Callable
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.table_decompose.cells import leading_pad
from mlx26.core.table_decompose.grid import Cell, Grid, a1_range, build_grid

OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP_MAGIC = b"PK\x03\x04"
_ENCRYPTION_STREAM = "EncryptionInfo".encode("utf-16-le")


def check_workbook_bytes(data: bytes, name: str) -> None:
    """Refuse .xls and encrypted workbooks with a clear message (ValueError → exit 2)."""
    if data.startswith(OLE2_MAGIC):
        if _ENCRYPTION_STREAM in data:
            raise InputError(f"{name} is a password-protected (encrypted) workbook",
                             "save an unprotected copy (File > Info > Protect Workbook > remove the password)")
        raise InputError(f"{name} is a legacy .xls (BIFF) workbook; only .xlsx is read",
                         "re-save it as .xlsx, or export the sheet as CSV")
    if not data.startswith(ZIP_MAGIC):
        raise InputError(f"{name} is not an .xlsx workbook (no zip signature)",
                         "set --input-format to the file's real format")


def _sections(fmt: str) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    quoted = False
    for ch in fmt:
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            out.append("".join(current))
            current = []
        else:
            current.append(ch)
    out.append("".join(current))
    return out


def _literal(part: str) -> str:
    """The literal text of a format fragment: quoted strings, escapes, currency, brackets removed."""
    part = re.sub(r"\[\$([^\]-]*)(-[^\]]*)?\]", r"\1", part)  # [$€-407] → €
    part = re.sub(r"\[[^\]]*\]", "", part)  # colours, conditions
    out, i = [], 0
    while i < len(part):
        ch = part[i]
        if ch == '"':
            j = part.find('"', i + 1)
            j = len(part) if j == -1 else j
            out.append(part[i + 1:j])
            i = j + 1
            continue
        if ch == "\\" and i + 1 < len(part):
            out.append(part[i + 1])
            i += 2
            continue
        if ch == "_" and i + 1 < len(part):
            i += 2  # padding the width of the next character
            continue
        if ch == "*" and i + 1 < len(part):
            i += 2  # fill character
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def format_value(value: object, number_format: str | None) -> str:
    """The string Excel shows for a cell value under a (common) number format."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time(0) else value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if not isinstance(value, (int, float)):
        return str(value)
    fmt = (number_format or "General").strip()
    if fmt in ("General", "@", ""):
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return format(value, ".15g") if isinstance(value, float) else str(value)
    sections = _sections(fmt)
    section = sections[0]
    number = float(value)
    if number < 0 and len(sections) > 1 and sections[1].strip():
        section, number = sections[1], -number
    elif number == 0 and len(sections) > 2 and sections[2].strip():
        section = sections[2]
    m = re.search(r"[0#?](?:[0#?,.]|\s(?=[0#?]))*(?:[eE][+-][0#]+)?", _literal_positions(section))
    if not m:
        return _literal(section)
    body = m.group(0)
    prefix, suffix = _literal(section[:m.start()]), _literal(section[m.end():])
    if "%" in section.replace('"%"', ""):
        number *= 100
    decimals = len(re.sub(r"[^0#?]", "", body.split(".", 1)[1])) if "." in body else 0
    if re.search(r"[eE][+-]", body):
        text = f"{number:.{decimals}E}"
    else:
        grouping = "," if re.search(r"[0#?],[0#?]", body) else ""
        text = format(number, f"{grouping}.{decimals}f")
        if text.startswith("-") and float(text) == 0:
            text = text[1:]
    return f"{prefix}{text}{suffix}".strip()


def _literal_positions(section: str) -> str:
    """The section with quoted text, escapes and brackets blanked (same length), to find the number."""
    out = list(section)
    quoted = bracket = False
    for i, ch in enumerate(section):
        if ch == '"':
            quoted = not quoted
            out[i] = " "
        elif ch == "[" and not quoted:
            bracket = True
            out[i] = " "
        elif ch == "]" and bracket:
            bracket = False
            out[i] = " "
        elif quoted or bracket:
            out[i] = " "
        elif ch == "\\" and i + 1 < len(section):
            out[i] = " "
    return "".join(out)


def parse_range(ref: str) -> tuple[int, int, int, int]:
    """1-based inclusive (row0, col0, row1, col1) of an A1 range such as ``A3:G13``."""
    from openpyxl.utils.cell import range_boundaries

    try:
        c0, r0, c1, r1 = range_boundaries(ref.strip().upper())
    except (ValueError, TypeError) as exc:
        raise InputError(f"--range '{ref}' is not an A1 range", "write it like A3:G13") from exc
    if None in (c0, r0, c1, r1):
        raise InputError(f"--range '{ref}' must name both corners", "write it like A3:G13")
    if c0 > c1 or r0 > r1:  # type: ignore[operator]
        from openpyxl.utils.cell import get_column_letter

        fixed = f"{get_column_letter(min(c0, c1))}{min(r0, r1)}:{get_column_letter(max(c0, c1))}{max(r0, r1)}"  # type: ignore[type-var]
        raise InputError(f"--range '{ref}' is reversed (its first corner is not the top-left one)",
                         f"write the top-left corner first: --range {fixed}")
    return int(r0), int(c0), int(r1), int(c1)  # type: ignore[arg-type]


def _islands(values: list[tuple[int, int, Any]], merge_at: dict[tuple[int, int], tuple[int, int]]
             ) -> list[tuple[int, int]]:
    """Runs of sheet rows holding something, split by empty rows (merges count as filled)."""
    filled: set[int] = set()
    for r, c, _ in values:
        rs, _cs = merge_at.get((r, c), (1, 1))
        filled.update(range(r, r + rs))
    runs: list[tuple[int, int]] = []
    for r in sorted(filled):
        if runs and r == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], r)
        else:
            runs.append((r, r))
    return runs


def _tables_on_sheet(values: list[tuple[int, int, Any]], merge_at: dict[tuple[int, int], tuple[int, int]]
                     ) -> list[tuple[int, int]]:
    """Row spans of the tables on a sheet: islands with numbers, each with the text-only islands above it.

    A title is an island too (agencies leave a blank row under the title): it joins the table
    below it. Notes under a table ("Note: r revised…", "Source: …", ``regions.reads_like_note``)
    are an island after it: the leading rows of a text-only island that read like notes join
    the table above, the rest (a title) the table below. A sheet whose islands hold numbers
    only once is one table.
    """
    from mlx26.core.table_decompose.cells import NUMBER, parse_cell
    from mlx26.core.table_decompose.regions import reads_like_note

    rows_with_numbers = {r for r, _, xl in values
                         if isinstance(xl.value, (int, float)) and not isinstance(xl.value, bool)
                         or isinstance(xl.value, str) and parse_cell(xl.value).kind == NUMBER}
    texts: dict[int, list[str]] = {}
    for r, _c, xl in sorted(values, key=lambda t: (t[0], t[1])):
        if xl.value is not None and str(xl.value).strip():
            texts.setdefault(r, []).append(str(xl.value).strip())

    def note(r: int) -> bool:  # a row holding one note-like text (or nothing: under a merge)
        return r not in texts or (len(texts[r]) == 1 and r not in rows_with_numbers and reads_like_note(texts[r][0]))

    spans: list[tuple[int, int]] = []
    start: int | None = None
    for r0, r1 in _islands(values, merge_at):
        if start is None and spans:
            notes = r0
            while notes <= r1 and note(notes):
                notes += 1
            if notes > r0 and any(r in texts for r in range(r0, notes)):
                spans[-1] = (spans[-1][0], notes - 1)  # notes under the table above
                r0 = notes
            if r0 > r1:
                continue
        if start is None:
            start = r0
        if any(r0 <= r <= r1 for r in rows_with_numbers) and r1 > r0:
            spans.append((start, r1))
            start = None
    if start is not None and spans:  # trailing notes belong to the last table
        spans[-1] = (spans[-1][0], max(r for r, _, _ in values))
    return spans


def read_xlsx(data: bytes, *, sheet: str | None = None, strict: bool = False, name: str = "input",
              decide: Callable[..., str] | None = None, notices: list[str] | None = None,
              cell_range: str | None = None) -> Grid:
    """The grid of one worksheet (``sheet``: a name or a 0-based index; default the first).

    ``cell_range`` (``A3:G13``) reads only that part of the sheet. Without it, a sheet holding
    several tables one under another (split by empty rows) gives the first, with a notice.
    """
    bounds = parse_range(cell_range) if cell_range else None
    check_workbook_bytes(data, name)
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), data_only=True)
    except Exception as exc:  # openpyxl raises zip, XML and key errors for damaged files
        raise InputError(f"{name} cannot be read as .xlsx: {type(exc).__name__}: {exc}") from exc
    names = workbook.sheetnames
    if sheet is None:
        ws = workbook[names[0]]
        if len(names) > 1 and notices is not None:
            notices.append(f"{name} has {len(names)} sheets ({', '.join(names)}); reading '{names[0]}' (use --sheet)")
    elif sheet in names:
        ws = workbook[sheet]
    elif sheet.isdigit() and int(sheet) < len(names):
        ws = workbook[names[int(sheet)]]
    else:
        raise InputError(f"no sheet '{sheet}' in {name}", "sheets: " + ", ".join(names))
    merged = [(m.min_row, m.min_col, m.max_row, m.max_col) for m in ws.merged_cells.ranges]
    merge_at = {(r0, c0): (r1 - r0 + 1, c1 - c0 + 1) for r0, c0, r1, c1 in merged}
    values: list[tuple[int, int, Any]] = []
    for row in ws.iter_rows():
        for cell in row:
            if cell.value is not None or (cell.row, cell.column) in merge_at:
                values.append((cell.row, cell.column, cell))
    if bounds is not None:
        r0, c0, r1, c1 = bounds
        values = [v for v in values if r0 <= v[0] <= r1 and c0 <= v[1] <= c1]
        merge_at = {k: (min(rs, r1 - k[0] + 1), min(cs, c1 - k[1] + 1)) for k, (rs, cs) in merge_at.items()}
        if not values:
            raise InputError(f"--range {cell_range} is empty on sheet '{ws.title}'")
    else:
        tables = _tables_on_sheet(values, merge_at)
        if len(tables) > 1:
            last_col = max(c for _, c, _ in values)
            refs = [a1_range(t0 - 1, 0, t1 - 1, last_col - 1) for t0, t1 in tables]
            if notices is not None:
                notices.append(f"sheet '{ws.title}' of {name} holds {len(tables)} tables ({', '.join(refs)}); "
                               f"reading the first (choose one with --range)")
            values = [v for v in values if tables[0][0] <= v[0] <= tables[0][1]]
    if not values:
        grid = build_grid([], strict=strict, decide=decide)
        grid.source = {"format": "xlsx", "name": name, "sheet": ws.title}
        return grid
    top = min(r for r, _, _ in values)
    left = min(c for _, c, _ in values)
    cells: list[Cell] = []
    for r, c, xl in sorted(values, key=lambda t: (t[0], t[1])):
        text = format_value(xl.value, xl.number_format)
        rs, cs = merge_at.get((r, c), (1, 1))
        indent = float(getattr(xl.alignment, "indent", 0) or 0) + leading_pad(text) * 0.5
        cells.append(Cell(r - top, c - left, text, rs, cs, indent=indent, bold=bool(xl.font and xl.font.b)))
    grid = build_grid(cells, strict=strict, decide=decide, ragged_warning=False)  # a sheet has no ragged rows
    grid.source = {"format": "xlsx", "name": name, "sheet": ws.title,
                   "origin": a1_range(top - 1, left - 1, top - 1, left - 1)}
    return grid
