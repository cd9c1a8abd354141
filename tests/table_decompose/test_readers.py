"""Readers: HTML slot filling and cues, XLSX merges/indent/formats, CSV encodings, Markdown, HiTab JSON."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from mlx26.core.table_decompose.arbiter import Arbiter
from mlx26.core.table_decompose.load import detect_format, load_grid
from mlx26.core.table_decompose.read_html import list_tables, read_html
from mlx26.core.table_decompose.read_xlsx import format_value

DATA = Path(__file__).parent / "data"
openpyxl = pytest.importorskip("openpyxl")


def _spans(grid):
    return {(c.row, c.col): (c.rowspan, c.colspan) for c in grid.cells if c.rowspan > 1 or c.colspan > 1}


def test_html_slot_filling_follows_the_table_model():
    # The HTML spec's example shape: a rowspan pushes the next row's first cell to the right.
    html = ("<table><tr><td rowspan=2>A</td><td>B</td><td rowspan=3>C</td></tr>"
            "<tr><td>D</td></tr><tr><td>E</td><td>F</td></tr></table>")
    grid = read_html(html)
    assert grid.texts() == [["A", "B", "C"], ["", "D", ""], ["E", "F", ""]]
    assert _spans(grid) == {(0, 0): (2, 1), (0, 2): (3, 1)}
    assert grid.label_at(1, 0) == "A" and grid.label_at(2, 2) == "C"  # covered slots point at their anchor


def test_html_cues_indent_bold_th_thead_caption():
    html = ("<table><caption> Table 1  Sales </caption><thead><tr><th></th><th>2024</th></tr></thead><tbody>"
            "<tr><th><strong>Region</strong></th><td></td></tr>"
            "<tr><th style='padding-left: 2em'>North</th><td>1</td></tr>"
            "<tr><th class='stub-indent3'>South</th><td>2</td></tr>"
            "<tr><th>&nbsp;&nbsp;East</th><td>3</td></tr>"
            "<tr><td><div style='margin-left:16px'>West</div></td><td>4</td></tr></tbody>"
            "<tfoot><tr><td colspan=2>Source: us</td></tr></tfoot></table>")
    grid = read_html(html)
    cell = {c.label: c for c in grid.cells}
    assert grid.caption == ["Table 1 Sales"]
    assert cell["2024"].thead and cell["2024"].header and not cell["1"].header
    assert cell["Region"].bold and not cell["North"].bold
    assert cell["North"].indent == 2.0 and cell["South"].indent == 3.0
    assert cell["East"].indent == 1.0 and cell["East"].text == "\u00a0\u00a0East"  # the original string is kept
    assert cell["West"].indent == 1.0
    assert cell["Source: us"].foot


def test_html_unclosed_tags_and_bad_spans_warn_with_coordinates():
    html = "<table><tr><td></td><td colspan='0'>A<td colspan=abc>B<td rowspan=9>C<tr><td>r<td>1<td>2"
    grid = read_html(html)
    joined = " | ".join(grid.warnings)
    assert "unclosed <table>" in joined
    assert "cell B1: colspan='0' clamped to 1" in joined
    assert "cell C1: non-numeric colspan='abc'; using 1" in joined
    assert "cell D1: rowspan=9 runs past the last row; clipped to 2" in joined
    assert grid.texts()[1] == ["r", "1", "2", ""]


def test_html_overlapping_merges_strict_names_both_and_rule_clips_the_later():
    html = ("<table><tr><td></td><td>A</td><td rowspan=2>B</td></tr>"
            "<tr><td>x</td><td colspan=2>C</td></tr></table>")
    with pytest.raises(ValueError, match=r"overlapping merged cells C1:C2 \('B'\) and B2:C2 \('C'\)"):
        read_html(html, strict=True)
    arbiter = Arbiter()
    grid = read_html(html, decide=arbiter.decide)
    assert [c.kind for c in arbiter.cases] == ["span-conflict"]
    assert _spans(grid) == {(0, 2): (2, 1)}  # C was clipped to one column
    assert grid.label_at(1, 1) == "C" and grid.label_at(1, 2) == "B"


def test_html_overlap_second_option_clips_the_earlier():
    html = ("<table><tr><td></td><td>A</td><td rowspan=2>B</td></tr>"
            "<tr><td>x</td><td colspan=2>C</td></tr></table>")
    grid = read_html(html, decide=lambda **kw: "second")
    assert grid.label_at(1, 2) == "C" and grid.label_at(0, 2) == "B" and _spans(grid) == {(1, 1): (1, 2)}


def test_several_tables_need_an_index():
    html = "<table><tr><td>a</td></tr></table><table><caption>T2</caption><tr><td>b</td><td>1</td></tr></table>"
    assert [(t["index"], t["rows"], t["cols"], t["caption"]) for t in list_tables(html)] == [(0, 1, 1, ""),
                                                                                             (1, 1, 2, "T2")]
    with pytest.raises(ValueError, match=r"holds 2 tables \(#0: 1×1; #1: 1×2 'T2'\)"):
        read_html(html)
    assert read_html(html, table_index=1).texts() == [["b", "1"]]
    with pytest.raises(ValueError, match="out of range"):
        read_html(html, table_index=2)


def test_nested_tables_are_separate():
    html = "<table><tr><td>outer<table><tr><td>inner</td></tr></table></td><td>1</td></tr></table>"
    assert read_html(html, table_index=0).texts() == [["outer", "1"]]
    assert read_html(html, table_index=1).texts() == [["inner"]]


def _xlsx(build) -> bytes:
    wb = openpyxl.Workbook()
    build(wb)
    buffer = io.BytesIO()
    wb.save(buffer)
    return buffer.getvalue()


def test_xlsx_merges_indent_bold_and_crop():
    from openpyxl.styles import Alignment, Font

    def build(wb):
        ws = wb.active
        ws["C3"] = "Total"
        ws.merge_cells("C3:D3")
        ws["B5"] = "Food alone"
        ws["B5"].font = Font(bold=True)
        ws["B6"] = "2004"
        ws["B6"].alignment = Alignment(indent=2)
        ws["C6"] = 53
        ws["D6"] = 1.25
        ws["C4"] = "Mean"
        ws["D4"] = "SE"

    grid = load_grid(_xlsx(build), fmt="xlsx", name="t.xlsx")
    assert grid.source["origin"] == "B3"
    assert grid.texts()[0] == ["", "Total", ""] and _spans(grid) == {(0, 1): (1, 2)}
    cell = {c.label: c for c in grid.cells}
    assert cell["Food alone"].bold and cell["2004"].indent == 2.0 and cell["53"].text == "53"


@pytest.mark.parametrize(("value", "fmt", "shown"), [
    (1234.5, "#,##0.00", "1,234.50"),
    (-1610, "#,##0;(#,##0)", "(1,610)"),
    (0.24, "0%", "24%"),
    (0.1234, "0.0%", "12.3%"),
    (2.25, '"$"#,##0.00', "$2.25"),
    (5813, "$#,##0", "$5,813"),
    (53, "General", "53"),
    (53.0, "General", "53"),
    (0.1, "General", "0.1"),
    (1234567, "#,##0", "1,234,567"),
    (1500, '[$€-407]#,##0', "€1,500"),
    (-2.5, "0.0;[Red]-0.0", "-2.5"),
    (12, '0" kg"', "12 kg"),
    ("text", "General", "text"),
    (True, "General", "TRUE"),
])
def test_xlsx_number_formats(value, fmt, shown):
    assert format_value(value, fmt) == shown


def test_xlsx_sheet_selection():
    def build(wb):
        wb.active.title = "first"
        wb.active["A1"] = "a"
        second = wb.create_sheet("second")
        second["A1"] = "b"

    data = _xlsx(build)
    notices: list[str] = []
    assert load_grid(data, fmt="xlsx", notices=notices).texts() == [["a"]]
    assert "2 sheets" in notices[0]
    assert load_grid(data, fmt="xlsx", sheet="second").texts() == [["b"]]
    assert load_grid(data, fmt="xlsx", sheet="1").texts() == [["b"]]
    with pytest.raises(ValueError, match="no sheet 'third'"):
        load_grid(data, fmt="xlsx", sheet="third")


def test_xlsx_password_protected_and_legacy_xls_are_refused():
    protected = (DATA / "protected.xlsx").read_bytes()
    with pytest.raises(ValueError, match="password-protected"):
        load_grid(protected, name="protected.xlsx")
    with pytest.raises(ValueError, match=r"legacy \.xls"):
        load_grid(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504, name="old.xls")
    with pytest.raises(ValueError, match="not an .xlsx"):
        load_grid(b"hello", fmt="xlsx")


def test_csv_bom_latin1_and_ragged_rows():
    grid = load_grid("\ufeffRegion,2020\nNorth,1\n".encode("utf-8"), name="a.csv")
    assert grid.texts()[0] == ["Region", "2020"] and not grid.warnings
    grid = load_grid("Café,2020\nThé,3\n".encode("latin-1"), name="b.csv")
    assert grid.texts() == [["Café", "2020"], ["Thé", "3"]]
    assert grid.warnings == ["b.csv is not UTF-8; decoded as Windows-1252"]
    grid = load_grid(b"a,b,c\nr,1\ns,2,3,4\n", name="c.csv")
    assert grid.n_cols == 4 and grid.texts()[1] == ["r", "1", "", ""]
    assert "ragged rows: 2 row(s) have fewer than 4 fields (first: row 1)" in grid.warnings[0]


def test_tsv_and_semicolon_csv():
    assert load_grid(b"a\tb\n1\t2\n", name="t.tsv").texts() == [["a", "b"], ["1", "2"]]
    assert load_grid(b"a;b\n1;2\n", fmt="csv").texts() == [["a", "b"], ["1", "2"]]


def test_markdown_header_bold_nbsp_and_escaped_pipe():
    text = ("Intro text\n\n| Region | 2023 | 2024 |\n|---|---:|---|\n| **North** | 1 | 2 |\n"
            "| &nbsp;&nbsp;City a\\|b | 3 | 4 |\n\nafter\n")
    grid = load_grid(text.encode(), name="t.md")
    cell = {c.label: c for c in grid.cells}
    assert cell["Region"].thead and not cell["North"].thead
    assert cell["North"].bold and cell["North"].text == "North"
    assert cell["City a|b"].indent == 1.0


@pytest.mark.parametrize(("data", "name", "fmt"), [
    (b"<table></table>", "-", "html"), (b"  <!DOCTYPE html><p>", "", "html"), (b"PK\x03\x04rest", "", "xlsx"),
    (b'{"texts": []}', "", "hitab-json"), (b"| a |\n|---|\n| 1 |\n", "", "md"), (b"a\tb\n", "", "tsv"),
    (b"a,b\n", "", "csv"), (b"anything", "x.HTM", "html"), (b"anything", "x.json", "hitab-json"),
])
def test_format_detection(data, name, fmt):
    assert detect_format(data, name) == fmt


def test_hitab_json_reader_uses_texts_and_merges():
    doc = {"title": "T", "texts": [["", "total", ""], ["", "a", "b"], ["x", 1, 2.0]],
           "merged_regions": [{"first_row": 0, "last_row": 0, "first_column": 1, "last_column": 2}],
           "top_root": {}, "left_root": {}}
    import json

    grid = load_grid(json.dumps(doc).encode(), fmt="hitab-json")
    assert grid.caption == ["T"] and _spans(grid) == {(0, 1): (1, 2)}
    assert grid.texts()[2] == ["x", "1", "2"]
    with pytest.raises(ValueError, match="not HiTab table JSON"):
        load_grid(b'{"rows": []}', fmt="hitab-json")


def test_wrong_option_for_format():
    with pytest.raises(ValueError, match="--sheet applies to XLSX"):
        load_grid(b"a,b\n", fmt="csv", sheet="x")
    with pytest.raises(ValueError, match="--table-index applies to HTML"):
        load_grid(b"a,b\n", fmt="csv", table_index=1)


def test_html_tokenizer_edge_cases():
    html = ("<!DOCTYPE html><!-- <table><tr><td>not a table</td></tr></table> -->"
            "<script>var s = '<table><tr><td>nor this</td></tr></table>';</script>"
            "<TABLE><TR><TD title='a > b'>R&amp;D</TD><Td>1&nbsp;000</tD></TR>"
            "<tr><td>line<br/>two</td><td/><td>a < b</td></tr></TABLE>")
    grid = read_html(html)
    assert grid.texts() == [["R&D", "1\u00a0000", ""], ["line\ntwo", "", "a < b"]]
    assert not any("unclosed" in w for w in grid.warnings)


def test_html_inline_bold_must_cover_all_text():
    grid = read_html("<table><tr><td><b>all</b></td><td><b>part</b> of it</td>"
                     "<td style='font-weight:700'>styled</td></tr></table>")
    bold = {c.label: c.bold for c in grid.cells}
    assert bold == {"all": True, "part of it": False, "styled": True}
