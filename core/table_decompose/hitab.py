"""HiTab / TUTA table JSON: read it as a grid, and read its trees as gold paths.

Part of the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969); HiTab (Cheng et al.,
ACL 2022) defines the format: ``texts`` (the full matrix, merged cells written in their
top-left "core" cell), ``merged_regions`` (``first_row``, ``last_row``, ``first_column``,
``last_column``), ``top_root`` / ``left_root`` (trees of ``{row_index, column_index,
children}``, -1 for the virtual root), ``top_header_rows_num`` / ``left_header_columns_num``
and ``title``. As input only the matrix, the merges and the title are used: the trees and
header counts are what we compute (``gold_paths`` reads them for ``eval``). HiTab's matrix
holds no layout cues, so an indentation-only row hierarchy cannot be recovered from it; our
writer (``Decomposition.hitab()``) therefore adds ``cell_styles`` (``row``, ``column``,
``indent`` in em, ``bold``), an mlx26 extension that this reader uses when present.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.table_decompose.cells import label_of, leading_pad
from mlx26.core.table_decompose.grid import Cell, Grid, build_grid


def load_json(text: str, name: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name} line {exc.lineno}: invalid JSON ({exc.msg})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("texts"), list):
        raise InputError(f"{name} is not HiTab table JSON: no 'texts' matrix", "HiTab tables hold texts, "
                         "merged_regions, top_root and left_root")
    return data


def _region(region: Any) -> tuple[int, int, int, int]:
    if isinstance(region, dict):
        return (int(region["first_row"]), int(region["last_row"]), int(region["first_column"]),
                int(region["last_column"]))
    if isinstance(region, (list, tuple)) and len(region) == 4:
        return tuple(int(x) for x in region)  # type: ignore[return-value]
    raise InputError(f"malformed merged region {region!r}")


def read_hitab(data: dict[str, Any], *, strict: bool = False, name: str = "input",
               decide: Callable[..., str] | None = None) -> Grid:
    """The grid of a HiTab table: ``texts`` + ``merged_regions`` (+ ``title`` as the caption)."""
    texts = data["texts"]
    if not all(isinstance(row, list) for row in texts):
        raise InputError(f"{name}: 'texts' must be a list of rows")
    spans: dict[tuple[int, int], tuple[int, int]] = {}
    for region in data.get("merged_regions") or []:
        try:
            r0, r1, c0, c1 = _region(region)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{name}: malformed merged region {region!r}") from exc
        if r1 < r0 or c1 < c0 or r0 < 0 or c0 < 0:
            raise InputError(f"{name}: merged region {region!r} has negative extent")
        spans[(r0, c0)] = (r1 - r0 + 1, c1 - c0 + 1)
    width = max((len(row) for row in texts), default=0)
    warnings: list[str] = []
    short = [i for i, row in enumerate(texts) if len(row) < width]
    if short:
        warnings.append(f"ragged rows: {len(short)} row(s) of 'texts' are shorter than {width} (first: row {short[0] + 1}); "
                        "padded with empty cells")
    styles: dict[tuple[int, int], dict[str, Any]] = {}
    for style in data.get("cell_styles") or []:  # mlx26's extension: indentation and bold cues
        if isinstance(style, dict) and "row" in style and "column" in style:
            styles[(int(style["row"]), int(style["column"]))] = style
    cells = []
    for r, row in enumerate(texts):
        for c, value in enumerate(row):
            text = "" if value is None else (value if isinstance(value, str) else _number_text(value))
            rs, cs = spans.get((r, c), (1, 1))
            if text or (rs, cs) != (1, 1):
                style = styles.get((r, c), {})
                cells.append(Cell(r, c, text, rs, cs, indent=float(style.get("indent") or leading_pad(text) * 0.5),
                                  bold=bool(style.get("bold"))))
    for (r, c), (rs, cs) in spans.items():
        if r >= len(texts) or c >= len(texts[r]):
            cells.append(Cell(r, c, "", rs, cs))
    grid = build_grid(cells, n_rows=len(texts), n_cols=width, strict=strict, decide=decide, warnings=warnings,
                      ragged_warning=False)
    title = label_of(str(data.get("title") or ""))
    grid.caption = [title] if title else []
    grid.source = {"format": "hitab-json", "name": name}
    return grid


def _number_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def gold_paths(data: dict[str, Any]) -> dict[str, Any]:
    """Gold H, L, per-row and per-column label paths and tree edges from a HiTab table's trees."""
    texts = data["texts"]
    spans: dict[tuple[int, int], tuple[int, int, int, int]] = {}
    for region in data.get("merged_regions") or []:
        r0, r1, c0, c1 = _region(region)
        spans[(r0, c0)] = (r0, r1, c0, c1)

    def label(node: dict[str, Any]) -> str:
        r, c = node.get("row_index", -1), node.get("column_index", -1)
        if 0 <= r < len(texts) and 0 <= c < len(texts[r]):
            return label_of(str(texts[r][c] or ""))
        return ""

    def extent(node: dict[str, Any]) -> tuple[int, int, int, int]:
        r, c = node.get("row_index", -1), node.get("column_index", -1)
        return spans.get((r, c), (r, r, c, c))

    def walk(root: dict[str, Any], axis: str) -> tuple[dict[int, list[str]], set[tuple[tuple[str, ...], ...]]]:
        paths: dict[int, list[str]] = {}
        nodes: set[tuple[str, ...]] = set()

        def visit(node: dict[str, Any], prefix: list[str]) -> None:
            own = label(node)
            path = prefix + ([own] if own else [])
            if own:
                nodes.add(tuple(path))
            r0, r1, c0, c1 = extent(node)
            lo, hi = (c0, c1) if axis == "col" else (r0, r1)
            for k in range(lo, hi + 1):
                if k not in paths or len(path) >= len(paths[k]):
                    paths[k] = path
            for child in node.get("children") or []:
                visit(child, path)

        for child in (root or {}).get("children") or []:
            visit(child, [])
        return paths, nodes  # type: ignore[return-value]

    col_paths, col_nodes = walk(data.get("top_root") or {}, "col")
    row_paths, row_nodes = walk(data.get("left_root") or {}, "row")
    return {"H": int(data.get("top_header_rows_num") or 0), "L": int(data.get("left_header_columns_num") or 0),
            "col_paths": col_paths, "row_paths": row_paths, "col_nodes": col_nodes, "row_nodes": row_nodes}
