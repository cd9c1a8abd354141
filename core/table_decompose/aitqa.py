"""The AITQA tables and questions shipped with mlx26, as logical tables for rendering and eval.

AIT-QA (Katsis et al., NAACL 2022 industry track; IBM, CDLA-Sharing-1.0 — the licence and
source note ship beside the data in ``data/aitqa/``): 113 airline-industry tables from SEC
filings with gold ``column_header`` paths (per data column) and ``row_header`` paths (per
data row), and 515 questions with answers and a ``row_hierarchy_needed`` flag.

Gold normalisation (ours): empty labels are dropped from paths (a blank header level is not
a path member) and whitespace runs collapse to one space. Tables whose header counts do not
match their data (``column_header`` width ≠ data width, or a non-empty ``row_header`` whose
length ≠ the number of rows) are reported as shape-inconsistent and left out of the metrics.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError
from mlx26.core.table_decompose.cells import label_of
from mlx26.core.table_decompose.render import LogicalTable

DATA_DIR = Path(__file__).resolve().parent / "data" / "aitqa"
TABLES_FILE = "aitqa_tables.jsonl"
QUESTIONS_FILE = "aitqa_questions.jsonl"


@dataclass
class AitqaTable:
    id: str
    table: LogicalTable
    consistent: bool
    raw: dict[str, Any]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    out = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path} line {number}: invalid JSON ({exc.msg})") from exc
    return out


def clean_path(path: list[Any]) -> list[str]:
    return [label_of(str(x)) for x in path if label_of(str(x))]


def resolve(path: str | Path | None, file_name: str) -> Path:
    """A gold file: the given file, ``file_name`` inside a given folder, or the shipped copy."""
    if path is None:
        return DATA_DIR / file_name
    p = Path(path)
    if p.is_dir():
        p = p / file_name
    if not p.is_file():
        raise InputError(f"AITQA file not found: {p}", f"give {file_name} or the folder holding it")
    return p


def load_tables(path: str | Path | None = None) -> list[AitqaTable]:
    """AITQA tables (the shipped copy by default) as logical tables."""
    out: list[AitqaTable] = []
    for raw in _jsonl(resolve(path, TABLES_FILE)):
        try:
            data = [[str(x) for x in row] for row in raw["data"]]
            col_paths = [clean_path(p) for p in raw["column_header"]]
            row_paths = [clean_path(p) for p in raw.get("row_header") or []]
        except (KeyError, TypeError) as exc:
            raise InputError(f"AITQA table {raw.get('id', '?')}: missing or malformed field ({exc})") from exc
        width = max((len(r) for r in data), default=0)
        consistent = (len(col_paths) == width and all(len(r) == width for r in data)
                      and (not row_paths or len(row_paths) == len(data)))
        out.append(AitqaTable(str(raw.get("id", len(out))), LogicalTable(col_paths, row_paths, data, id=raw.get("id", "")),
                              consistent, raw))
    if not out:  # an empty file would score a perfect edge F1 over zero tables
        raise InputError(f"no AITQA tables in {path if path is not None else 'the shipped copy'}.",
                         "give aitqa_tables.jsonl (one table a line) or its folder")
    return out


def load_questions(path: str | Path | None = None) -> list[dict[str, Any]]:
    """AITQA questions (the shipped copy by default)."""
    return _jsonl(resolve(path, QUESTIONS_FILE))
