"""Render a table given by its header paths to HTML, XLSX, CSV/TSV or Markdown.

Our own code, used to build evaluation inputs for the reconstruction of Cao et al. (ICML
2026, arXiv 2602.01969) from gold paths (AITQA, generated tables) and the shipped examples.
A :class:`LogicalTable` holds, per data column, its column path; per data row, its row path;
and the data strings. Two layouts:

* ``indent`` — column headers as merged cells (a label spans the consecutive columns that
  share its path prefix; a path's last label stretches down to the last header row), row
  headers in one column: each row's leaf label indented by its depth, with a section row
  (label, no data) wherever a new parent starts. Written merged (HTML/XLSX) or blank-filled.
* ``columns`` — the same column headers; row headers in one column per level, a parent label
  written only where it changes (blank-filled, an implicit rowspan), the leaf always written.

``Rendered.data_pos`` maps each logical data cell (i, j) to its grid slot (r, c).
"""

from __future__ import annotations

import csv
import html
import io
from dataclasses import dataclass, field

from mlx26.core.common.errors import InputError
from mlx26.core.table_decompose.grid import Cell


@dataclass
class LogicalTable:
    """A table as paths: ``col_paths[j]``, ``row_paths[i]`` (may be empty lists) and ``data[i][j]``."""

    col_paths: list[list[str]]
    row_paths: list[list[str]]
    data: list[list[str]]
    caption: str = ""
    corner: str = ""
    notes: list[str] = field(default_factory=list)
    id: str = ""


@dataclass
class Rendered:
    cells: list[Cell]
    n_rows: int
    n_cols: int
    H: int
    L: int
    top: int  # first header row (after the caption row)
    data_pos: dict[tuple[int, int], tuple[int, int]]
    caption: str = ""


def layout(table: LogicalTable, *, rows: str = "indent", caption_row: bool = False) -> Rendered:
    """Place the table's cells on a grid (see the module docstring for the two layouts)."""
    if rows not in ("indent", "columns"):
        raise InputError(f"unknown row layout '{rows}'")
    cols = table.col_paths
    n_data_cols = len(cols)
    H = max((len(p) for p in cols), default=0)
    has_rows = any(table.row_paths)
    L = (1 if has_rows else 0) if rows == "indent" else max((len(p) for p in table.row_paths), default=0)
    cells: list[Cell] = []
    top = 0
    width = L + n_data_cols
    if caption_row and table.caption:
        cells.append(Cell(0, 0, table.caption))
        top = 1
    if table.corner and L and H:
        cells.append(Cell(top, 0, table.corner, rowspan=H, colspan=L, header=True, thead=True))
    for i in range(H):
        j = 0
        while j < n_data_cols:
            path = cols[j]
            if i >= len(path):
                j += 1
                continue
            k = j + 1
            while k < n_data_cols and len(cols[k]) > i and cols[k][:i + 1] == path[:i + 1]:
                k += 1
            ends = all(len(cols[x]) == i + 1 for x in range(j, k))
            cells.append(Cell(top + i, L + j, path[i], rowspan=H - i if ends else 1, colspan=k - j, header=True,
                              thead=True))
            j = k
    r = top + H
    data_pos: dict[tuple[int, int], tuple[int, int]] = {}
    open_path: list[str] = []
    for i, values in enumerate(table.data):
        path = table.row_paths[i] if i < len(table.row_paths) else []
        if rows == "indent" and L:
            for d in range(len(path) - 1):
                if open_path[:d + 1] != path[:d + 1]:
                    cells.append(Cell(r, 0, path[d], indent=float(d), header=True))
                    r += 1
                    open_path = path[:d + 1]
            if path:
                cells.append(Cell(r, 0, path[-1], indent=float(len(path) - 1), header=True))
            open_path = list(path)
        elif L:
            for k, label in enumerate(path):
                if k == len(path) - 1 or open_path[:k + 1] != path[:k + 1]:
                    cells.append(Cell(r, k, label, header=True))
            open_path = list(path)
        for j, value in enumerate(values[:n_data_cols]):
            data_pos[(i, j)] = (r, L + j)
            if value:
                cells.append(Cell(r, L + j, value))
        r += 1
    for note in table.notes:
        cells.append(Cell(r, 0, note, foot=True))
        r += 1
    return Rendered(cells, r, width, H, L, top, data_pos, table.caption if not caption_row else "")


def _text_indent(cell: Cell) -> str:
    return "\u00a0" * int(round(cell.indent * 2)) + cell.text if cell.indent else cell.text


def to_html(rendered: Rendered, *, merged: bool = True, th_rows: bool = True) -> str:
    """An HTML document; indentation as ``padding-left`` in em; merges as row/colspan (``merged``)."""
    anchors = {(c.row, c.col): c for c in rendered.cells}
    covered = set()
    if merged:
        for c in rendered.cells:
            for rr in range(c.row, c.last_row + 1):
                for cc in range(c.col, c.last_col + 1):
                    if (rr, cc) != (c.row, c.col):
                        covered.add((rr, cc))
    out = ["<!DOCTYPE html>", "<html><body>", "<table>"]
    if rendered.caption:
        out.append(f"<caption>{html.escape(rendered.caption)}</caption>")
    section = None
    for r in range(rendered.n_rows):
        row_cells = [anchors.get((r, c)) for c in range(rendered.n_cols)]
        kind = "thead" if any(c is not None and c.thead for c in row_cells) else (
            "tfoot" if any(c is not None and c.foot for c in row_cells) else "tbody")
        if kind != section:
            if section:
                out.append(f"</{section}>")
            out.append(f"<{kind}>")
            section = kind
        parts = []
        for c in range(rendered.n_cols):
            if (r, c) in covered:
                continue
            cell = anchors.get((r, c))
            tag = "th" if cell is not None and (cell.thead or (cell.header and th_rows)) else "td"
            attrs = ""
            if cell is not None and merged:
                attrs += f' rowspan="{cell.rowspan}"' if cell.rowspan > 1 else ""
                attrs += f' colspan="{cell.colspan}"' if cell.colspan > 1 else ""
            if cell is not None and cell.indent:
                attrs += f' style="padding-left:{cell.indent:g}em"'
            text = html.escape(cell.text) if cell is not None else ""
            if cell is not None and cell.bold:
                text = f"<b>{text}</b>"
            parts.append(f"<{tag}{attrs}>{text}</{tag}>")
        out.append("<tr>" + "".join(parts) + "</tr>")
    if section:
        out.append(f"</{section}>")
    out += ["</table>", "</body></html>", ""]
    return "\n".join(out)


def to_xlsx(rendered: Rendered, *, merged: bool = True, sheet: str = "table") -> bytes:
    """XLSX bytes: strings in cells, merged ranges (``merged``), ``alignment.indent``, bold."""
    import openpyxl
    from openpyxl.styles import Alignment, Font

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = sheet[:31]
    for c in rendered.cells:
        xl = ws.cell(row=c.row + 1, column=c.col + 1, value=c.text)
        if c.text.startswith("="):
            xl.data_type = "s"  # a label, not a formula
        if c.indent:
            xl.alignment = Alignment(indent=int(round(c.indent)))
        if c.bold:
            xl.font = Font(bold=True)
        if merged and (c.rowspan > 1 or c.colspan > 1):
            ws.merge_cells(start_row=c.row + 1, start_column=c.col + 1, end_row=c.last_row + 1,
                           end_column=c.last_col + 1)
    buffer = io.BytesIO()
    wb.save(buffer)
    return buffer.getvalue()


def matrix(rendered: Rendered, *, indent_text: bool = True) -> list[list[str]]:
    """Blank-filled strings: each cell's text in its anchor slot; indentation as leading NBSP."""
    out = [[""] * rendered.n_cols for _ in range(rendered.n_rows)]
    for c in rendered.cells:
        out[c.row][c.col] = _text_indent(c) if indent_text else c.text
    return out


def to_csv(rendered: Rendered, *, delimiter: str = ",") -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerows(matrix(rendered))
    return buffer.getvalue()


def to_markdown(rendered: Rendered) -> str:
    """A pipe table: the first grid row above the ``|---|`` line, the rest below."""
    rows = matrix(rendered)
    if not rows:
        return ""

    def fmt(row: list[str]) -> str:
        return "| " + " | ".join(x.replace("|", "\\|").replace("\n", " ") for x in row) + " |"

    return "\n".join([fmt(rows[0]), "|" + "---|" * rendered.n_cols] + [fmt(r) for r in rows[1:]]) + "\n"
