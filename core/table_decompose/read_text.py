"""CSV, TSV and Markdown tables → grids (no merges: blank cells are read as implicit spans later).

Part of the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969); the reader is ours.
Bytes are decoded as UTF-8 (a BOM is dropped), else as Windows-1252 / Latin-1 with a warning.
Ragged rows are padded with empty cells (warning). Indentation is read from leading spaces
and no-break spaces (0.5 em each). Markdown pipe tables: the rows above the ``|---|`` line
are marked as header (like ``<thead>``); ``**bold**`` / ``__bold__`` marks a bold cue and is
removed from the string, as ``<b>`` is in HTML; ``&nbsp;`` and other entities are decoded;
``\\|`` is a literal pipe.
"""

from __future__ import annotations

import csv
import html
import io
import re

from mlx26.core.common.errors import InputError
from mlx26.core.table_decompose.cells import leading_pad
from mlx26.core.table_decompose.grid import Cell, Grid, build_grid


def decode(data: bytes, name: str, warnings: list[str]) -> str:
    """UTF-8 (BOM dropped), else Windows-1252, else Latin-1 (which always succeeds)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    for encoding in ("cp1252", "latin-1"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        warnings.append(f"{name} is not UTF-8; decoded as {'Windows-1252' if encoding == 'cp1252' else 'Latin-1'}")
        return text
    raise AssertionError("latin-1 decodes every byte")


def _pad(rows: list[list[str]], warnings: list[str]) -> list[list[str]]:
    while rows and not any(x.strip() for x in rows[-1]):
        rows.pop()
    width = max((len(r) for r in rows), default=0)
    short = [i for i, r in enumerate(rows) if len(r) != width]
    if short:
        warnings.append(f"ragged rows: {len(short)} row(s) have fewer than {width} fields (first: row {short[0] + 1}); "
                        "padded with empty cells")
    return [r + [""] * (width - len(r)) for r in rows]


def read_delimited(text: str, delimiter: str, *, name: str = "input", warnings: list[str] | None = None) -> Grid:
    """A CSV/TSV grid; every field is one cell, empty fields are empty slots."""
    warnings = [] if warnings is None else warnings
    if "\x00" in text:
        raise InputError(f"{name} contains NUL bytes: it is not a text table", "check --input-format")
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as exc:
        raise InputError(f"{name}: malformed {'TSV' if delimiter == chr(9) else 'CSV'} ({exc})") from exc
    rows = _pad(rows, warnings)
    cells = [Cell(r, c, t, indent=leading_pad(t) * 0.5) for r, row in enumerate(rows) for c, t in enumerate(row) if t]
    grid = build_grid(cells, n_rows=len(rows), n_cols=max((len(r) for r in rows), default=0), warnings=warnings,
                      ragged_warning=False)
    grid.source = {"format": "tsv" if delimiter == "\t" else "csv", "name": name}
    return grid


def sniff_delimiter(text: str) -> str:
    head = [line for line in text.splitlines()[:20] if line.strip()]
    if not head:
        return ","
    counts = {d: sum(line.count(d) for line in head) for d in (",", "\t", ";")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$")
_BOLD = re.compile(r"^(\s*)(\*\*|__)(.+?)\2(\s*)$")


def _split_md(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    parts, current, i = [], [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] == "|":
            current.append("|")
            i += 2
            continue
        if s[i] == "|":
            parts.append("".join(current))
            current = []
        else:
            current.append(s[i])
        i += 1
    parts.append("".join(current))
    return parts


def markdown_tables(text: str) -> list[tuple[int, int, int]]:
    """(first line, separator line, last line) of each pipe table."""
    lines = text.splitlines()
    out = []
    i = 0
    while i < len(lines):
        if _SEPARATOR.match(lines[i]) and "-" in lines[i] and i > 0 and "|" in lines[i - 1]:
            start = i - 1
            while start > 0 and "|" in lines[start - 1] and lines[start - 1].strip():
                start -= 1
            end = i
            while end + 1 < len(lines) and "|" in lines[end + 1] and lines[end + 1].strip():
                end += 1
            out.append((start, i, end))
            i = end + 1
        else:
            i += 1
    return out


def read_markdown(text: str, *, table_index: int | None = None, name: str = "input",
                  warnings: list[str] | None = None) -> Grid:
    """The grid of one Markdown pipe table (``table_index`` when the text holds several)."""
    warnings = [] if warnings is None else warnings
    tables = markdown_tables(text)
    if not tables:
        raise InputError(f"no Markdown pipe table (with a |---| line) found in {name}", "check --input-format")
    lines = text.splitlines()
    if table_index is None:
        if len(tables) > 1:
            listing = "; ".join(f"#{i}: {e - s} rows" for i, (s, _, e) in enumerate(tables))
            raise InputError(f"{name} holds {len(tables)} Markdown tables ({listing})", "choose one with --table-index N")
        table_index = 0
    if not 0 <= table_index < len(tables):
        raise InputError(f"--table-index {table_index} is out of range: {name} holds {len(tables)} table(s)")
    start, sep, end = tables[table_index]
    raw = [_split_md(lines[k]) for k in range(start, end + 1) if k != sep]
    head_rows = sep - start
    raw = _pad(raw, warnings)
    cells = []
    for r, row in enumerate(raw):
        for c, field in enumerate(row):
            value = html.unescape(field.rstrip(" "))
            value = value[1:] if value.startswith(" ") and not value.startswith("  ") else value
            bold = False
            m = _BOLD.match(value)
            if m:
                value, bold = m.group(1) + m.group(3), True
            if value.strip():
                cells.append(Cell(r, c, value, indent=leading_pad(value) * 0.5, bold=bold, thead=r < head_rows))
    grid = build_grid(cells, n_rows=len(raw), n_cols=max((len(r) for r in raw), default=0), warnings=warnings,
                      ragged_warning=False)
    grid.source = {"format": "md", "name": name, "table_index": table_index, "tables": len(tables)}
    return grid
