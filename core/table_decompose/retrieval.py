"""LLM-free answer retrieval on AITQA: rank each data cell's context string against the question.

Our benchmark protocol for the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969);
the paper's own evaluation (with LLMs) is not public. Each AITQA table is rendered as HTML
(merged column headers in ``<thead>``, indented row headers with section rows) and three
linearisations of it compete:

* **OHD** — our decomposition's ``lines`` context: ``row path | column path`` (the value left out);
* **pandas** — ``pandas.read_html`` with its multi-level column labels flattened (``Unnamed``
  levels and repeats dropped), the row identified by its first cell: ``row label + column label``;
* **markdown** — a plain Markdown linearisation (blank-filled merges): the cell's whole
  Markdown row line plus the header labels written above it in its column.

For each question, a TF-IDF vectoriser (scikit-learn; fitted on that table's candidate
strings; lowercase, English stop words, sublinear tf) scores every non-empty data cell by
cosine similarity with the question; the top-1 cell (ties: reading order) is correct when its
string equals one of the answers (whitespace-normalised). The value itself is never part of
the OHD or pandas string; the Markdown row line contains the row's values by construction.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlx26.core.table_decompose.cells import label_of


@dataclass
class Candidate:
    text: str  # the string ranked against the question
    value: str  # the cell's original string


def ohd_candidates(dec: Any) -> list[Candidate]:
    """``row path | column path`` (or the row key) per data cell of a decomposition."""
    out = []
    for rec in dec.records:
        row = " ".join(rec["row_path"])
        if not row and rec.get("row_key"):
            row = f"{rec['row_key']['label']} {rec['row_key']['value']}"
        out.append(Candidate(f"{row} | {' '.join(rec['col_path'])}", rec["text"]))
    return out


def _flatten(label: Any) -> str:
    levels = label if isinstance(label, tuple) else (label,)
    out: list[str] = []
    for level in levels:
        text = label_of(str(level))
        if text.startswith("Unnamed:") or not text or (out and out[-1] == text):
            continue
        out.append(text)
    return " ".join(out)


def pandas_candidates(html: str, texts: list[list[str]], header_rows: int) -> list[Candidate]:
    """Cells of ``pandas.read_html``'s frame: first-column row label + flattened column label.

    Values are read from the same grid positions (``texts``) so that pandas' type conversion
    does not change the strings compared with the answers.
    """
    import pandas as pd

    frame = pd.read_html(io.StringIO(html), keep_default_na=False, thousands=None)[0]
    out = []
    columns = [_flatten(c) for c in frame.columns]
    for i in range(frame.shape[0]):
        row_label = label_of(str(frame.iat[i, 0]))
        grid_row = texts[header_rows + i] if header_rows + i < len(texts) else []
        for j in range(frame.shape[1]):
            value = grid_row[j] if j < len(grid_row) else ""
            if label_of(value) and label_of(str(frame.iat[i, j])):
                out.append(Candidate(f"{row_label} {columns[j]}", value))
    return out


def markdown_candidates(texts: list[list[str]], header_rows: int) -> list[Candidate]:
    """Markdown linearisation: the cell's row line plus the labels above it in its column."""
    out = []
    for r in range(header_rows, len(texts)):
        row = texts[r]
        line = "| " + " | ".join(label_of(x) for x in row) + " |"
        for c, value in enumerate(row):
            if c == 0 or not label_of(value):
                continue
            above = " ".join(label_of(texts[h][c]) for h in range(header_rows) if label_of(texts[h][c]))
            out.append(Candidate(f"{line} {above}", value))
    return out


def rank(question: str, candidates: list[Candidate], vectoriser: Callable[[], Any]) -> Candidate | None:
    """The candidate whose string is most similar to the question (TF-IDF cosine; ties: first)."""
    if not candidates:
        return None
    vec = vectoriser()
    try:
        matrix = vec.fit_transform([c.text for c in candidates])
    except ValueError:  # empty vocabulary (only stop words)
        return candidates[0]
    scores = (matrix @ vec.transform([question]).T).toarray().ravel()
    best = int(scores.argmax())
    return candidates[best]


def default_vectoriser() -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(lowercase=True, token_pattern=r"(?u)\b\w+\b", stop_words="english", sublinear_tf=True)


def correct(candidate: Candidate | None, answers: list[Any]) -> bool:
    return candidate is not None and label_of(candidate.value) in {label_of(str(a)) for a in answers}


def run(aitqa: str | Path, limit: int | None = None, vectoriser: Callable[[], Any] = default_vectoriser,
        table_ids: list[str] | None = None) -> dict[str, Any]:
    """Top-1 answer retrieval accuracy of OHD, pandas and markdown on AITQA (``aitqa``: its folder)."""
    from mlx26.core.table_decompose.aitqa import load_questions, load_tables
    from mlx26.core.table_decompose.decompose import decompose
    from mlx26.core.table_decompose.load import load_grid
    from mlx26.core.table_decompose.render import layout, matrix, to_html

    all_tables = load_tables(aitqa)
    tables = {t.id: t for t in all_tables if t.consistent and (table_ids is None or t.id in table_ids)}
    prepared: dict[str, dict[str, list[Candidate]]] = {}
    for tid, item in tables.items():
        rendered = layout(item.table, rows="indent")
        html = to_html(rendered)
        texts = matrix(rendered, indent_text=False)
        dec = decompose(load_grid(html.encode("utf-8"), fmt="html", name=f"{tid}.html"))
        prepared[tid] = {"ohd": ohd_candidates(dec), "pandas": pandas_candidates(html, texts, rendered.H),
                         "markdown": markdown_candidates(texts, rendered.H)}
    questions = [q for q in load_questions(aitqa) if q["table_id"] in prepared][:limit]
    methods = ("ohd", "pandas", "markdown")
    hits: dict[str, dict[str, int]] = {m: {"all": 0, "Yes": 0, "No": 0} for m in methods}
    counts = {"all": 0, "Yes": 0, "No": 0}
    for q in questions:
        flag = "Yes" if str(q.get("row_hierarchy_needed", "")).lower() == "yes" else "No"
        counts["all"] += 1
        counts[flag] += 1
        for m in methods:
            ok = correct(rank(q["question"], prepared[q["table_id"]][m], vectoriser), q["answers"])
            hits[m]["all"] += ok
            hits[m][flag] += ok
    accuracy = {m: {k: (hits[m][k] / counts[k] if counts[k] else 0.0) for k in counts} for m in methods}
    return {"questions": counts, "tables": len(prepared), "hits": hits, "accuracy": accuracy,
            "skipped_tables": sorted({t.id for t in all_tables if not t.consistent})}
