"""The AITQA tables and questions, read from a folder the caller names, as logical tables.

AIT-QA (Katsis et al., NAACL 2022 industry track; IBM, CDLA-Sharing-1.0): 113 airline-industry
tables from SEC filings with gold ``column_header`` paths (per data column) and ``row_header``
paths (per data row), and 515 questions with answers and a ``row_hierarchy_needed`` flag. mlx26
does not ship it: every loader takes the folder holding IBM/AITQA's ``raw_data/`` files
``aitqa_tables.jsonl`` and ``aitqa_questions.jsonl`` (the CLI's ``eval --aitqa DIR``; in this
project's checkout, ``../shared/data/aitqa`` beside the repository).

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

TABLES_FILE = "aitqa_tables.jsonl"
QUESTIONS_FILE = "aitqa_questions.jsonl"
EXPECTED = (f"expected a folder holding {TABLES_FILE} and {QUESTIONS_FILE} (IBM/AITQA's raw_data/ files, "
            "one JSON object a line)")


@dataclass
class AitqaTable:
    id: str
    table: LogicalTable
    consistent: bool
    raw: dict[str, Any]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    out = []
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    try:
                        item = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise InputError(f"{path} line {number}: invalid JSON ({exc.msg})", EXPECTED) from exc
                    if not isinstance(item, dict):
                        raise InputError(f"{path} line {number}: not a JSON object", EXPECTED)
                    out.append(item)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text (byte {exc.start})", EXPECTED) from exc
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}", EXPECTED) from exc
    return out


def clean_path(path: list[Any]) -> list[str]:
    return [label_of(str(x)) for x in path if label_of(str(x))]


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def resolve(path: str | Path | None, file_name: str) -> Path:
    """A gold file: ``file_name`` inside the AITQA folder ``path`` (or ``path`` itself when it is a file).

    There is no default: mlx26 ships no copy of AITQA. A missing folder or file is an InputError
    whose hint names the expected files.
    """
    if path is None or str(path) == "":
        raise InputError("no AITQA folder given: mlx26 ships no copy of the dataset",
                         f"pass --aitqa DIR, a folder holding {TABLES_FILE} and {QUESTIONS_FILE} (IBM/AITQA's "
                         "raw_data/ files)")
    p = Path(path)
    if p.is_dir():
        if not (p / file_name).is_file():
            raise InputError(f"AITQA folder {path} has no {file_name}", EXPECTED)
        return p / file_name
    if not p.exists():
        raise InputError(f"AITQA folder not found: {path}", EXPECTED)
    if not p.is_file():
        raise InputError(f"AITQA path is not a folder or a file: {path}", EXPECTED)
    return p


def load_tables(path: str | Path) -> list[AitqaTable]:
    """The AITQA tables of the folder ``path`` (or the tables file itself) as logical tables."""
    out: list[AitqaTable] = []
    for raw in _jsonl(resolve(path, TABLES_FILE)):
        try:
            data = [[str(x) for x in _list(row)] for row in _list(raw["data"])]
            col_paths = [clean_path(_list(p)) for p in _list(raw["column_header"])]
            row_paths = [clean_path(_list(p)) for p in raw.get("row_header") or []]
        except (KeyError, TypeError) as exc:
            raise InputError(f"AITQA table {raw.get('id', '?')}: missing or malformed field ({exc})",
                             EXPECTED) from exc
        width = max((len(r) for r in data), default=0)
        consistent = (len(col_paths) == width and all(len(r) == width for r in data)
                      and (not row_paths or len(row_paths) == len(data)))
        out.append(AitqaTable(str(raw.get("id", len(out))), LogicalTable(col_paths, row_paths, data, id=raw.get("id", "")),
                              consistent, raw))
    if not out:  # an empty file would score a perfect edge F1 over zero tables
        raise InputError(f"no AITQA tables in {resolve(path, TABLES_FILE)}.", EXPECTED)
    return out


def load_questions(path: str | Path) -> list[dict[str, Any]]:
    """The AITQA questions of the folder ``path`` (or the questions file itself)."""
    out = _jsonl(resolve(path, QUESTIONS_FILE))
    for q in out:
        missing = [k for k in ("table_id", "question", "answers") if k not in q]
        if missing or not isinstance(q["answers"], list):
            field = missing[0] if missing else "answers"
            raise InputError(f"AITQA question {q.get('id', '?')}: missing or malformed field '{field}'", EXPECTED)
    return out
