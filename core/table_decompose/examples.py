"""The embedded example tables behind ``mlx26 table-decompose --example NAME``.

All of them are written for mlx26 (no dataset is copied): a hand-written StatCan-style HTML
table (``statcan``; illustrative numbers, not official statistics) and three small made-up
hierarchical tables defined below as header paths — a fictional orchard cooperative's harvest,
a fictional town library's loans and a fictional tram and bus network's ridership. ``render``
writes each as HTML and XLSX (merged column headers, indented row headers with section rows)
and as blank-filled CSV (one column per row-header level); ``make_examples`` regenerates those
files deterministically from ``TABLES``. They exercise what the decomposition has to recover:
multi-level column headers (a parent spanning several columns, leaves of different depths
stretched down), a row-header hierarchy up to three levels deep, merged cells, totals,
placeholders and accounting negatives.
"""

from __future__ import annotations

from pathlib import Path

from mlx26.core.common.errors import unknown_name
from mlx26.core.table_decompose.render import LogicalTable, layout, to_csv, to_html, to_xlsx

EXAMPLES_DIR = Path(__file__).resolve().parent / "data" / "examples"

# name → (caption, logical table). Every label and number here is invented for the examples.
TABLES: dict[str, tuple[str, LogicalTable]] = {
    # Two-level column header (two parents over two years each); three-level row hierarchy.
    "orchard": ("Harvest of a fictional orchard cooperative, by grove and crop (made-up numbers)", LogicalTable(
        col_paths=[["Tonnes harvested", "2023"], ["Tonnes harvested", "2024"],
                   ["Share of cooperative total (%)", "2023"], ["Share of cooperative total (%)", "2024"]],
        row_paths=[["North valley", "Apples", "Early varieties"], ["North valley", "Apples", "Late varieties"],
                   ["North valley", "Pears"], ["South ridge", "Apples", "Early varieties"],
                   ["South ridge", "Apples", "Late varieties"], ["South ridge", "Cherries"],
                   ["Cooperative total"]],
        data=[["1,240", "1,315", "22.1", "21.8"], ["1,870", "2,020", "33.3", "33.5"],
              ["615", "640", "11.0", "10.6"], ["980", "1,105", "17.5", "18.3"],
              ["540", "575", "9.6", "9.5"], ["365", "380", "6.5", "6.3"],
              ["5,610", "6,035", "100.0", "100.0"]])),
    # Column leaves at depth 1 and 2 (a one-level leaf stretches down); rows at depth 1 and 2.
    "library": ("Loans of a fictional town library, by term and reader group (made-up numbers)", LogicalTable(
        col_paths=[["Books", "Printed"], ["Books", "E-books"], ["Audiobooks"], ["Periodicals", "Magazines"],
                   ["Periodicals", "Newspapers"], ["All loans"]],
        row_paths=[["Opening balance of open loans"], ["Spring term", "Adult readers"],
                   ["Spring term", "Young readers"], ["Spring term", "Lost or withdrawn"],
                   ["Autumn term", "Adult readers"], ["Autumn term", "Young readers"],
                   ["Autumn term", "Lost or withdrawn"], ["Closing balance of open loans"]],
        data=[["412", "96", "38", "25", "—", "571"], ["3,105", "1,240", "402", "388", "96", "5,231"],
              ["2,260", "310", "155", "120", "—", "2,845"], ["(41)", "—", "(6)", "(9)", "(2)", "(58)"],
              ["2,870", "1,395", "447", "351", "88", "5,151"], ["2,915", "344", "171", "134", "—", "3,564"],
              ["(37)", "—", "(4)", "(11)", "(1)", "(53)"], ["455", "118", "41", "29", "—", "643"]])),
    # Three-level column header (day type > period > measure; the weekend has no period level).
    "transit": ("Ridership of a fictional tram and bus network, by line (made-up numbers)", LogicalTable(
        col_paths=[["Weekdays", "Peak hours", "Boardings"], ["Weekdays", "Peak hours", "Mean delay, minutes"],
                   ["Weekdays", "Off-peak", "Boardings"], ["Weekdays", "Off-peak", "Mean delay, minutes"],
                   ["Weekends", "Boardings"], ["Weekends", "Mean delay, minutes"]],
        row_paths=[["Tram lines", "Line 1 Harbour–Old Town"], ["Tram lines", "Line 4 University"],
                   ["Bus routes", "Route 12 Airport"], ["Bus routes", "Route 30 Hillside"],
                   ["Bus routes", "Night route N2"], ["All lines"]],
        data=[["18,450", "2.4", "9,870", "1.1", "12,300", "0.9"], ["11,020", "3.1", "6,140", "1.6", "4,480", "1.2"],
              ["7,310", "4.8", "5,925", "3.2", "6,050", "2.7"], ["4,265", "2.2", "2,180", "1.4", "1,395", "1.0"],
              ["..", "..", "640", "0.8", "1,210", "1.3"], ["41,045", "3.0", "24,755", "1.8", "25,435", "1.4"]])),
}

EXAMPLES: dict[str, str] = {"statcan": "statcan_sugars.html"}
for _name in TABLES:
    EXAMPLES[f"{_name}-html"] = f"{_name}.html"
    EXAMPLES[f"{_name}-xlsx"] = f"{_name}.xlsx"
    EXAMPLES[f"{_name}-csv"] = f"{_name}_blank.csv"


def example_path(name: str) -> Path:
    """The shipped file of an example; an InputError (with the names) when unknown."""
    if name not in EXAMPLES:
        hint = "examples: " + ", ".join(EXAMPLES)
        if name.startswith("aitqa"):  # the AITQA renderings were removed: the dataset is not shipped
            hint = ("the AITQA examples were removed (mlx26 ships no AITQA copy; score AITQA with "
                    "'eval --aitqa DIR'); " + hint)
        raise unknown_name("example", name, EXAMPLES, hint)
    return EXAMPLES_DIR / EXAMPLES[name]


def example_table(name: str) -> LogicalTable:
    """The logical table (gold paths) behind ``NAME-html|xlsx|csv``, with its caption."""
    base = name.rsplit("-", 1)[0] if name not in TABLES else name
    if base not in TABLES:
        raise unknown_name("generated example", name, TABLES)
    caption, table = TABLES[base]
    return LogicalTable([list(p) for p in table.col_paths], [list(p) for p in table.row_paths],
                        [list(r) for r in table.data], caption=caption, id=base)


def make_examples(out_dir: str | Path) -> list[Path]:
    """Render the generated example tables into ``out_dir`` (HTML and XLSX merged, CSV blank-filled)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in TABLES:
        table = example_table(name)
        merged = layout(table, rows="indent")
        (out / f"{name}.html").write_text(to_html(merged), encoding="utf-8")
        (out / f"{name}.xlsx").write_bytes(to_xlsx(merged, sheet=name))
        (out / f"{name}_blank.csv").write_text(to_csv(layout(table, rows="columns")), encoding="utf-8")
        written += [out / f"{name}.html", out / f"{name}.xlsx", out / f"{name}_blank.csv"]
    return written
