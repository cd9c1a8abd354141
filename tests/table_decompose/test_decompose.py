"""Decomposition: the issue's StatCan example, invariants over generated tables, formats agree, edge cases."""

from __future__ import annotations

import json

import pytest
from mlx26.core.table_decompose import decompose, load_grid
from mlx26.core.table_decompose.examples import example_path
from mlx26.core.table_decompose.render import layout, to_csv, to_html, to_markdown, to_xlsx

from tests.table_decompose.gen import random_table

pytest.importorskip("openpyxl")


def _decompose(data: bytes | str, fmt: str = "auto", **kw):
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return decompose(load_grid(raw, fmt=fmt), **kw)


def test_statcan_example_gives_the_issue_line_and_nests_same_indent_sections():
    dec = _decompose(example_path("statcan").read_bytes(), "html")
    lines = dec.lines()
    # The line quoted in the issue, verbatim.
    assert lines[0] == "Aged 2 to 8 years > Food alone > 2004 | Total > Mean grams = 53"
    assert "Aged 9 to 18 years > Food and supplements > 2015 | Males > Mean grams = F" in lines
    assert dec.layout.H == 2 and dec.layout.L == 1
    assert dec.row_dims == ["Age group and source"]
    assert len(dec.layout.note_rows) == 4 and dec.captions()[0].startswith("Table 3 Mean daily total sugars")
    flagged = next(r for r in dec.records if r["text"] == "12.4E")
    assert flagged["number"] == 12.4 and flagged["kind"] == "number"
    # "Food alone" (no data, same indent as the years below it) heads "2004" and "2015".
    tree = dec.trees()["row_tree"]
    aged = tree[0]
    assert aged["label"] == "Aged 2 to 8 years"
    assert [c["label"] for c in aged["children"]] == ["Food alone", "Food and supplements"]
    assert [c["label"] for c in aged["children"][0]["children"]] == ["2004", "2015"]
    assert tree[2]["label"] == "Total, aged 2 and over" and tree[2]["total"] is True


def test_every_data_cell_once_with_header_paths(tmp_path):
    for seed in range(25):
        table = random_table(seed)
        rendered = layout(table, rows="indent")
        dec = _decompose(to_html(rendered), "html")
        header_rows, body = set(dec.layout.header_rows), set(dec.layout.body_rows)
        positions = [(r["row"], r["col"]) for r in dec.records]
        assert len(positions) == len(set(positions))
        expected = {rendered.data_pos[(i, j)] for i, row in enumerate(table.data) for j, v in enumerate(row) if v}
        assert set(positions) == expected, seed
        for rec in dec.records:
            assert all(r in header_rows and c >= dec.layout.L for r, c in rec["col_cells"]), seed
            assert all(r in body and c < dec.layout.L for r, c in rec["row_cells"]), seed
            assert all(dec.grid.label_at(r, c) == label
                       for (r, c), label in zip(rec["col_cells"] + rec["row_cells"], rec["col_path"] + rec["row_path"],
                                                strict=True))


def _check_containment(dec):
    col = dec.col_tree
    for node in col.nodes.values():
        if node.parent is not None:
            parent = col.nodes[node.parent]
            assert parent.cols[0] <= node.cols[0] and node.cols[1] <= parent.cols[1]
            assert parent.rows[1] < node.rows[0]
    row = dec.row_tree
    for node in row.nodes.values():
        if node.parent is not None:
            parent = row.nodes[node.parent]
            assert parent.row <= node.row and parent.col <= node.col
            assert parent.rows[0] <= node.rows[0] and node.rows[1] <= parent.rows[1]


@pytest.mark.parametrize("render", ["html", "xlsx", "csv", "csv-columns", "md"])
def test_generated_tables_recover_their_paths_and_trees_nest(render):
    for seed in range(20):
        table = random_table(seed)
        rendered = layout(table, rows="columns" if render == "csv-columns" else "indent")
        if render == "html":
            data = to_html(rendered).encode()
        elif render == "xlsx":
            data = to_xlsx(rendered)
        elif render == "md":
            data = to_markdown(rendered).encode()
        else:
            data = to_csv(rendered).encode()
        dec = _decompose(data, {"csv-columns": "csv"}.get(render, render))
        got = {(r["row"], r["col"]): (r["row_path"], r["col_path"]) for r in dec.records}
        for i, row in enumerate(table.data):
            for j, value in enumerate(row):
                if value:
                    assert got[rendered.data_pos[(i, j)]] == (table.row_paths[i], table.col_paths[j]), (seed, i, j)
        _check_containment(dec)


def test_same_table_as_html_xlsx_and_blank_filled_csv_gives_the_same_lineage():
    for seed in range(15):
        rendered = layout(random_table(seed), rows="indent")
        outputs = []
        for data, fmt in ((to_html(rendered).encode(), "html"), (to_xlsx(rendered), "xlsx"),
                          (to_csv(rendered).encode(), "csv")):
            dec = _decompose(data, fmt)
            outputs.append([(r["row"], r["col"], r["text"].strip("\u00a0"), r["row_path"], r["col_path"],
                             r["row_cells"], r["col_cells"]) for r in dec.records])
        assert outputs[0] == outputs[1] == outputs[2], seed


def test_reruns_are_byte_identical():
    data = example_path("library-xlsx").read_bytes()
    first = _decompose(data, "xlsx")
    second = _decompose(data, "xlsx")
    assert json.dumps(first.records) == json.dumps(second.records)
    assert json.dumps(first.trees()) == json.dumps(second.trees())
    assert json.dumps(first.hitab()) == json.dumps(second.hitab())


def test_original_strings_are_preserved():
    html = "<table><tr><td></td><td>2024</td></tr><tr><td>&nbsp;North</td><td> $(1,610)&nbsp;</td></tr></table>"
    rec = _decompose(html, "html").records[0]
    assert rec["text"] == "$(1,610)\u00a0" and rec["number"] == -1610


def test_empty_and_header_only_tables():
    for data in ("", "a,b,c\n", "<table></table>", "<table><tr><th>a</th><th>b</th></tr></table>"):
        dec = _decompose(data, "html" if "<" in data else "csv")
        assert dec.empty and dec.records == [] and dec.lines() == []
        trees = dec.trees()
        assert trees["data_cells"] == 0 and isinstance(trees["column_tree"], list)
    header_only = _decompose("a,b,c\n", "csv")
    assert header_only.layout.H == 1 and [n["label"] for n in header_only.trees()["column_tree"]] == ["a", "b", "c"]


def test_blank_filled_multilevel_headers_and_forward_fill():
    csv = (",,Total,,Males,\n,,Mean,SE,Mean,SE\nAged 2 to 8,2004,53,1.2,55,1.6\n,2015,45,1.1,47,1.4\n"
           "Aged 9 to 18,2004,72,1.5,80,2.1\n")
    dec = _decompose(csv, "csv")
    assert dec.layout.H == 2 and dec.layout.L == 2
    lines = dec.lines()
    assert lines[0] == "Aged 2 to 8 > 2004 | Total > Mean = 53"
    assert "Aged 2 to 8 > 2015 | Males > SE = 1.4" in lines
    assert "Aged 9 to 18 > 2004 | Males > Mean = 80" in lines


def test_key_column_table_reports_row_key_not_row_path():
    csv = "Type,Seats,Average Age\n737-700,143,15\n737-800,175,7\n"
    dec = _decompose(csv, "csv")
    assert dec.layout.L == 0 and dec.layout.key_column
    rec = next(r for r in dec.records if r["text"] == "175")
    assert rec["row_path"] == [] and rec["row_key"] == {"label": "Type", "value": "737-800", "cell": [2, 0]}
    assert dec.lines()[1] == "Type = 737-700 | Seats = 143"
    assert [c.kind for c in dec.cases] == ["header-cols"]


def test_key_cells_stay_records_marked_is_key_because_aitqa_scores_them_as_data():
    dec = _decompose("Type,Seats,Average Age\n737-700,143,15\n737-800,175,7\n", "csv")
    keys = [r for r in dec.records if r.get("is_key")]
    assert [(r["text"], r["col_path"]) for r in keys] == [("737-700", ["Type"]), ("737-800", ["Type"])]
    assert all("row_key" not in r for r in keys) and all(not r.get("is_key") for r in dec.records if r["col"])
    assert dec.lines()[0] == "Type = 737-700"


def test_header_overrides_and_out_of_range():
    csv = "a,b\nc,1\nd,2\n"
    dec = _decompose(csv, "csv", header_rows=0, header_cols=1)
    assert dec.layout.H == 0 and dec.lines()[0] == "a = b"
    with pytest.raises(ValueError, match="--header-rows 9 is out of range"):
        _decompose(csv, "csv", header_rows=9)
    with pytest.raises(ValueError, match="--header-cols 2 is out of range"):
        _decompose(csv, "csv", header_cols=2)


def test_total_rows_are_flagged_and_parent_indented_rows():
    html = ("<table><tr><th></th><th>2024</th></tr>"
            "<tr><td>All persons</td><td>100</td></tr>"
            "<tr><td style='padding-left:1em'>Men</td><td>48</td></tr>"
            "<tr><td style='padding-left:1em'>Women</td><td>52</td></tr></table>")
    dec = _decompose(html, "html")
    assert dec.lines() == ["All persons | 2024 = 100", "All persons > Men | 2024 = 48",
                           "All persons > Women | 2024 = 52"]
    assert [r["total"] for r in dec.records] == [True, False, False]
    assert [c.kind for c in dec.cases] == ["total-parent"]
    sibling = _decompose(html, "html", arbiter=_Always("sibling"))
    assert sibling.lines()[1] == "Men | 2024 = 48"


def test_units_row_case_can_drop_units_from_paths():
    csv = ",Revenue,Cost\n,(in millions),(in millions)\nNorth,10,12\nSouth,7,9\n"
    dec = _decompose(csv, "csv")
    assert dec.lines()[0] == "North | Revenue > (in millions) = 10"
    assert [c.kind for c in dec.cases] == ["units-row"]
    unit = _decompose(csv, "csv", arbiter=_Always("unit"))
    assert unit.lines()[0] == "North | Revenue = 10" and unit.records[0]["unit"] == "(in millions)"


def test_section_without_cue_is_a_case():
    csv = ",2024\nRegion A,\nNorth,1\nSouth,2\n"
    dec = _decompose(csv, "csv")
    assert dec.lines()[0] == "Region A > North | 2024 = 1"
    assert [c.kind for c in dec.cases] == ["section-scope"]
    flat = _decompose(csv, "csv", arbiter=_Always("flat"))
    assert flat.lines()[0] == "North | 2024 = 1"


def test_markdown_and_hitab_outputs():
    dec = _decompose(example_path("statcan").read_bytes(), "html")
    md = dec.markdown().splitlines()
    assert md[0].startswith("| Age group and source | Total > Mean grams |")
    assert md[2].startswith("| Aged 2 to 8 years > Food alone > 2004 | 53 |")
    hitab = dec.hitab()
    assert hitab["top_header_rows_num"] == 2 and hitab["left_header_columns_num"] == 1
    assert hitab["top_root"]["row_index"] == -1 and hitab["top_root"]["children"][0]["row_index"] == 0
    assert {"first_row": 0, "last_row": 1, "first_column": 0, "last_column": 0} in hitab["merged_regions"]


class _Always:
    """An arbiter that picks a fixed option id whenever it is offered (else the rule)."""

    name = "test"

    def __init__(self, choice: str):
        from mlx26.core.table_decompose.arbiter import Arbiter

        self.inner = Arbiter()
        self.choice = choice
        self.cases = self.inner.cases

    def decide(self, **kw):
        ids = [i for i, _ in kw["options"]]
        chosen = self.choice if self.choice in ids else kw["default"]
        self.inner.decide(**{**kw, "default": chosen})
        return chosen
