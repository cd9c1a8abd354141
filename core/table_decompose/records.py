"""``table-decompose run`` over several tables as a record stream (issue 41).

A record is one table: ``{"table": name, "data": bytes, "format": fmt}``, read in the driver
(a folder of table files is listed by :func:`table_files`); a result is the table's output for
the chosen ``--emit`` plus its notices for stderr. Both engines of
:mod:`mlx26.core.common.engine` call the same :func:`decompose_tables`, so ``--engine local``
and ``--engine ray`` write identical output. Each table is decomposed on its own (its trees are
built over the whole table), so a table is the natural unit of the stream.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import Mlx26Error
from mlx26.core.table_decompose.load import TABLE_SUFFIXES


def _not_a_table(path: Path) -> str | None:
    """Why a file found in a folder is not a table (None: it is one, or it looks like a broken one)."""
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        return "not a table file"
    if suffix in (".md", ".markdown"):  # a README beside the tables
        from mlx26.core.table_decompose.read_text import markdown_tables

        if not markdown_tables(path.read_text(encoding="utf-8", errors="replace")):
            return "no Markdown pipe table"
    if suffix == ".json":  # a manifest or gold file beside the tables; unparsable JSON is a broken table
        try:
            doc = json.loads(path.read_bytes())
        except ValueError:
            return None
        if not (isinstance(doc, dict) and "texts" in doc):
            return "JSON without HiTab 'texts'"
    return None


def table_files(paths: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """``(tables, skipped)``: the paths named, and the table files under folders named (sorted,
    recursively, hidden folders skipped); ``skipped`` lists ``(path, why)`` of the other files
    found in folders. A file named explicitly is always a table (a bad one fails when read)."""
    tables: list[str] = []
    skipped: list[tuple[str, str]] = []
    for path in paths:
        p = Path(path)
        if path == "-" or not p.is_dir():
            tables.append(path)
            continue
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for f in sorted(files):
                if f.startswith("."):
                    continue
                found = Path(root) / f
                why = _not_a_table(found)
                if why is None:
                    tables.append(str(found))
                else:
                    skipped.append((str(found), why))
    return tables, skipped


def _table_output(result: Any, name: str, emit: str, stream: bool) -> Any:
    if emit == "lineage":
        return [{"table": name, **r} for r in result.records] if stream else result.records
    if emit == "lines":
        return [f"{name}: {x}" if stream else x for x in result.lines()]
    if emit == "markdown":
        return result.markdown() if not result.empty else ""
    doc = result.trees() if emit == "trees" else result.hitab()
    return {"table": name, **doc} if stream else doc


def decompose_tables(batch: list[dict[str, Any]], *, emit: str = "lines", options: dict[str, Any] | None = None,
                     stream: bool = True, arbiter_factory: Callable[[], Any] | None = None) -> list[dict[str, Any]]:
    """Decompose each table of ``batch``; per table ``{"table", "output", "notices", "empty"}``.

    ``options`` are :func:`decompose_bytes`'s (sheet, cell_range, table_index, strict,
    header_rows, header_cols), the same for every table. ``stream``: several tables, so each
    lineage record / tree document gains a ``table`` field, each line a ``NAME: `` prefix, and an
    error names the table. ``arbiter_factory`` (``--arbiter llm``, local engine only) gives each
    table its arbiter; None is the rules.
    """
    from mlx26.core.table_decompose.decompose import decompose_bytes

    out = []
    for table in batch:
        name = table["table"]
        notices: list[str] = []
        arbiter = arbiter_factory() if arbiter_factory is not None else None
        try:
            result = decompose_bytes(table["data"], fmt=table["format"], name=name, arbiter=arbiter,
                                     notices=notices, **(options or {}))
        except Mlx26Error as exc:
            if not stream or name in exc.message:
                raise
            raise type(exc)(f"{name}: {exc.message}", exc.hint) from exc
        messages = [f"warning: {m}" for m in notices + result.warnings]
        messages += [f"{c.kind}: chose '{c.chosen}' ({c.decided_by}) — {dict(c.options)[c.chosen]}"
                     for c in result.cases]
        if result.empty:
            messages.append("no data cells (empty or header-only table): lineage is empty")
        out.append({"table": name, "output": _table_output(result, name, emit, stream), "notices": messages,
                    "empty": result.empty})
    return out


__all__ = ["decompose_tables", "table_files"]
