"""Input formats: detection from the name and the bytes, and dispatch to the readers.

Part of the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969); this module is ours.
Formats: ``html``, ``xlsx``, ``csv``, ``tsv``, ``md`` (Markdown pipe table), ``hitab-json``.
``auto`` uses the extension, else the content: a zip signature is XLSX, an OLE2 signature
an .xls or encrypted workbook (refused with a clear message), ``<`` HTML, ``{`` HiTab JSON,
a ``|---|`` line Markdown, a tab TSV, else CSV.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mlx26.core.common.errors import InputError
from mlx26.core.table_decompose.grid import Grid
from mlx26.core.table_decompose.read_xlsx import OLE2_MAGIC, ZIP_MAGIC
from mlx26.core.table_decompose.spec import FORMATS

_EXT = {".html": "html", ".htm": "html", ".xhtml": "html", ".xlsx": "xlsx", ".xlsm": "xlsx", ".xls": "xlsx",
        ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".md": "md", ".markdown": "md", ".json": "hitab-json"}
TABLE_SUFFIXES = tuple(_EXT)  # what a table file's name ends in (a folder's tables: records.table_files)


def detect_format(data: bytes, name: str = "") -> str:
    """The input format from the file name's extension, else from the content."""
    ext = _EXT.get(Path(name).suffix.lower()) if name and name != "-" else None
    if ext:
        return ext
    if data.startswith(ZIP_MAGIC) or data.startswith(OLE2_MAGIC):
        return "xlsx"
    head = data[:4096].decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    low = head.lower()
    if low.startswith("<") or "<table" in low:
        return "html"
    if head.startswith("{"):
        return "hitab-json"
    from mlx26.core.table_decompose.read_text import markdown_tables

    if markdown_tables(head):
        return "md"
    first = next((line for line in head.splitlines() if line.strip()), "")
    return "tsv" if "\t" in first else "csv"


def load_grid(data: bytes, *, fmt: str = "auto", name: str = "input", sheet: str | None = None,
              table_index: int | None = None, strict: bool = False, decide: Callable[..., str] | None = None,
              notices: list[str] | None = None, cell_range: str | None = None) -> Grid:
    """Read one table from ``data`` (bytes) as a grid (``cell_range``: an XLSX A1 range)."""
    if fmt not in FORMATS:
        raise InputError(f"unknown input format '{fmt}'", "choose one of: " + ", ".join(FORMATS))
    if fmt == "auto":
        fmt = detect_format(data, name)
    if sheet is not None and fmt != "xlsx":
        raise InputError(f"--sheet applies to XLSX input only (this input is {fmt})")
    if cell_range is not None and fmt != "xlsx":
        raise InputError(f"--range applies to XLSX input only (this input is {fmt})")
    if table_index is not None and fmt not in ("html", "md"):
        raise InputError(f"--table-index applies to HTML and Markdown input only (this input is {fmt})")
    if fmt == "xlsx":
        from mlx26.core.table_decompose.read_xlsx import read_xlsx

        return read_xlsx(data, sheet=sheet, strict=strict, name=name, decide=decide, notices=notices,
                         cell_range=cell_range)
    from mlx26.core.table_decompose.read_text import decode

    warnings: list[str] = []
    if data.startswith(ZIP_MAGIC) or data.startswith(OLE2_MAGIC):
        raise InputError(f"{name} is a binary workbook, not {fmt} text", "use --input-format xlsx (or auto)")
    text = decode(data, name, warnings)
    if fmt == "html":
        from mlx26.core.table_decompose.read_html import read_html

        grid = read_html(text, table_index=table_index, strict=strict, decide=decide, name=name)
    elif fmt in ("csv", "tsv"):
        from mlx26.core.table_decompose.read_text import read_delimited, sniff_delimiter

        delimiter = "\t" if fmt == "tsv" else (";" if sniff_delimiter(text) == ";" else ",")
        grid = read_delimited(text, delimiter, name=name)
    elif fmt == "md":
        from mlx26.core.table_decompose.read_text import read_markdown

        grid = read_markdown(text, table_index=table_index, name=name)
    else:
        from mlx26.core.table_decompose.hitab import load_json, read_hitab

        grid = read_hitab(load_json(text, name), strict=strict, name=name, decide=decide)
    grid.warnings[:0] = warnings
    return grid
