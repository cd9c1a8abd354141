"""The embedded example tables behind ``mlx26 table-decompose --example NAME``.

Our own files, for the reconstruction of Cao et al. (ICML 2026, arXiv 2602.01969): a
hand-written StatCan-style HTML table (illustrative numbers, not official statistics) and a
few AITQA tables (IBM, CDLA-Sharing-1.0) rendered by ``render`` as HTML, XLSX and
blank-filled CSV. ``make_examples`` regenerates the AITQA renderings.
"""

from __future__ import annotations

from pathlib import Path

from mlx26.core.common.errors import unknown_name
from mlx26.core.table_decompose.render import layout, to_csv, to_html, to_xlsx

EXAMPLES_DIR = Path(__file__).resolve().parent / "data" / "examples"
AITQA_EXAMPLES = ("tab-5", "tab-6", "tab-67")
EXAMPLES: dict[str, str] = {"statcan": "statcan_sugars.html"}
for _tid in AITQA_EXAMPLES:
    _stem = "aitqa_" + _tid.replace("-", "")
    EXAMPLES[f"aitqa-{_tid.replace('-', '')}-html"] = f"{_stem}.html"
    EXAMPLES[f"aitqa-{_tid.replace('-', '')}-xlsx"] = f"{_stem}.xlsx"
    EXAMPLES[f"aitqa-{_tid.replace('-', '')}-csv"] = f"{_stem}_blank.csv"


def example_path(name: str) -> Path:
    """The shipped file of an example; ValueError (with the names) when unknown."""
    if name not in EXAMPLES:
        raise unknown_name("example", name, EXAMPLES, "examples: " + ", ".join(EXAMPLES))
    return EXAMPLES_DIR / EXAMPLES[name]


def make_examples(out_dir: str | Path) -> list[Path]:
    """Render the AITQA example tables into ``out_dir`` (HTML and XLSX merged, CSV blank-filled)."""
    from mlx26.core.table_decompose.aitqa import load_tables

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables = {t.id: t for t in load_tables()}
    written = []
    for tid in AITQA_EXAMPLES:
        table = tables[tid].table
        table.caption = f"AITQA {tid} (IBM AIT-QA, CDLA-Sharing-1.0), rendered by mlx26"
        stem = "aitqa_" + tid.replace("-", "")
        merged = layout(table, rows="indent")
        (out / f"{stem}.html").write_text(to_html(merged), encoding="utf-8")
        (out / f"{stem}.xlsx").write_bytes(to_xlsx(merged, sheet=tid))
        (out / f"{stem}_blank.csv").write_text(to_csv(layout(table, rows="columns")), encoding="utf-8")
        written += [out / f"{stem}.html", out / f"{stem}.xlsx", out / f"{stem}_blank.csv"]
    return written
