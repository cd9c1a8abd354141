"""SVEN's real vulnerability fixes as step-labelled functions, split by repository.

Data: SVEN (He & Vechev, CCS 2023; eth-sri/sven, MIT), read in place from a folder holding
``train/`` and ``val/`` with ``cwe-XXX.jsonl`` files (in this project ``../shared/data/sven``).
Each record is one real fixing commit's function before (vulnerable) and after (fixed), with
the deleted and added lines. For SecCodePRM (Yu et al., ICML 2026, arXiv 2602.10418) the
deleted lines are the vulnerable steps: human-chosen, step-level labels on real code.

The split is ours (reconstruction): SVEN's own ``train``/``val`` share projects (25 of val's 33
repositories also occur in train), so :func:`split` keeps SVEN ``val`` as the test set and
removes from training every pair whose repository appears in it; a calibration part is carved
out of the remaining training repositories by a hash of the repository name. No project is
in two parts.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError

PYTHON_CWES = ("cwe-022", "cwe-078", "cwe-079", "cwe-089")
_REPO = re.compile(r"(?:https?://)?github\.com/([^/]+/[^/]+)/commit", re.IGNORECASE)


@dataclass(frozen=True)
class Pair:
    """One fix: the vulnerable function, the fixed one, and the 1-based deleted lines of the former."""

    cwe: str
    repo: str
    commit: str
    name: str
    before: str
    after: str
    deleted: tuple[int, ...]
    added: tuple[int, ...] = field(default=())
    part: str = ""  # "train" or "val" as SVEN ships it


def repo_of(link: str) -> str:
    m = _REPO.search(link or "")
    return m.group(1).lower() if m else (link or "").lower()


def _lines(changes: Any, key: str) -> tuple[int, ...]:
    if isinstance(changes, str):  # a Python-literal dict in some SVEN exports
        changes = ast.literal_eval(changes)
    items = (changes or {}).get(key) or []
    return tuple(sorted({int(x["line_no"]) for x in items if isinstance(x, dict) and "line_no" in x}))


def load_pairs(folder: str | Path, parts: tuple[str, ...] = ("train", "val"), cwes: tuple[str, ...] = PYTHON_CWES,
               suffixes: tuple[str, ...] = (".py",)) -> list[Pair]:
    """Every Python fix of the SVEN folder (``train/`` and/or ``val/``), in file order.

    SVEN's files for these CWEs also hold some C/C++ functions (``file_name`` ``*.c``, ``*.cpp``,
    …): only files with one of ``suffixes`` are kept (342 train + 38 val Python pairs).
    """
    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"no SVEN folder at {folder}", "give the folder holding SVEN's train/ and val/ "
                         "(eth-sri/sven data_train_val)")
    out: list[Pair] = []
    for part in parts:
        for cwe in cwes:
            path = root / part / f"{cwe}.jsonl"
            if not path.is_file():
                raise InputError(f"SVEN folder {folder} lacks {part}/{cwe}.jsonl")
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                    if suffixes and not str(r.get("file_name", "")).endswith(suffixes):
                        continue
                    out.append(Pair(cwe, repo_of(r["commit_link"]), r["commit_link"], r["func_name"],
                                    r["func_src_before"], r["func_src_after"], _lines(r["line_changes"], "deleted"),
                                    _lines(r["line_changes"], "added"), part))
                except (json.JSONDecodeError, KeyError, TypeError, ValueError, SyntaxError) as exc:
                    raise InputError(f"{path.name} line {n}: not a SVEN record ({type(exc).__name__})") from exc
    return out


def _bucket(repo: str) -> float:
    return int(hashlib.sha256(repo.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def split(pairs: list[Pair], calibration: float = 0.2) -> dict[str, list[Pair]]:
    """``fit`` / ``calibration`` / ``test`` with no repository in two parts (test = SVEN val)."""
    test = [p for p in pairs if p.part == "val"]
    held = {p.repo for p in test}
    rest = [p for p in pairs if p.part != "val" and p.repo not in held]
    calib = [p for p in rest if _bucket(p.repo) < calibration]
    fit = [p for p in rest if _bucket(p.repo) >= calibration]
    return {"fit": fit, "calibration": calib, "test": test,
            "dropped_shared_repo": [p for p in pairs if p.part != "val" and p.repo in held]}


def dedented(code: str) -> tuple[str, int]:
    """The function as a module-level snippet (methods are indented) and the columns removed."""
    text = textwrap.dedent(code)
    first = next((line for line in code.splitlines() if line.strip()), "")
    shift = len(first) - len(first.lstrip()) if text != code else 0
    return text, shift


def split_summary(parts: dict[str, list[Pair]]) -> dict[str, Any]:
    return {name: {"pairs": len(ps), "repositories": len({p.repo for p in ps}),
                   "by_cwe": {c: sum(p.cwe == c for p in ps) for c in PYTHON_CWES}} for name, ps in parts.items()}
