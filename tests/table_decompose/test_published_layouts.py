"""Regression tables for the layouts statistical agencies publish (the project's own, small).

One test per failure class seen on real StatCan tables: a title merged over part of the width,
a units row under the column headers, labelled row-header columns (one, two, and a rank
column), units rows inside the body, row blocks restated as bands, a section the list resumes
after, plus footnote marks, notes, totals and spacer rows. Each table is written here by hand
in the layout of a published table; no cell comes from a shared dataset.
"""

from __future__ import annotations

import io

import pytest
from mlx26.core.table_decompose import decompose, load_grid

openpyxl = pytest.importorskip("openpyxl")


def _html(text: str):
    return decompose(load_grid(text.encode("utf-8"), fmt="html"))


def _xlsx(rows: list[list[object]], merges: list[str] = (), indent: dict[str, int] | None = None,
          bold: tuple[str, ...] = ()):
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in rows:
        ws.append(row)
    for ref in merges:
        ws.merge_cells(ref)
    for ref, level in (indent or {}).items():
        ws[ref].alignment = openpyxl.styles.Alignment(indent=level)
    for ref in bold:
        ws[ref].font = openpyxl.styles.Font(bold=True)
    buf = io.BytesIO()
    wb.save(buf)
    return decompose(load_grid(buf.getvalue(), fmt="xlsx"))


def _paths(dec) -> dict[tuple[int, int], tuple[list[str], list[str]]]:
    return {(r["row"], r["col"]): (r["row_path"], r["col_path"]) for r in dec.records}


def test_title_merged_over_part_of_the_width_is_a_caption_not_a_header():
    dec = _xlsx([["Table 3: Workers by region, 2011", None, None, None, None],
                 [None, "Region 1", None, "Region 2", None],
                 [None, "French", "English", "French", "English"],
                 ["Female", 35.3, 28.0, 41.8, 30.6], ["Male", 64.7, 72.0, 58.2, 69.4],
                 ["Single", 18.7, 24.8, 26.9, 26.1], ["Married", 51.3, 53.9, 47.8, 56.7]],
                merges=["A1:C1", "B2:C2", "D2:E2"])
    assert dec.captions() == ["Table 3: Workers by region, 2011"]
    assert dec.layout.H == 2
    assert dec.lines()[0] == "Female | Region 1 > French = 35.3"
    assert dec.lines()[3] == "Female | Region 2 > English = 30.6"


def test_units_row_merged_across_the_headers_is_the_cells_unit_not_a_level():
    dec = _xlsx([[None, "Region 1", None, "Region 2", None],
                 [None, "French", "English", "French", "English"],
                 [None, "percent", None, None, None],
                 ["Female", 35.3, 28.0, 41.8, 30.6], ["Male", 64.7, 72.0, 58.2, 69.4],
                 ["Single", 18.7, 24.8, 26.9, 26.1], ["Married", 51.3, 53.9, 47.8, 56.7]],
                merges=["A1:A3", "B1:C1", "D1:E1", "B3:E3"])
    rec = dec.records[2]
    assert rec["col_path"] == ["Region 2", "French"] and rec["unit"] == "percent"
    assert not [w for w in dec.warnings if "partly" in w]  # the units cell is not forced into the tree


def test_units_become_a_level_only_when_they_alone_tell_columns_apart():
    dec = _html("<table><tr><td rowspan=3>Group</td><td colspan=2>Agricultural population</td>"
                "<td colspan=2>Total population</td></tr>"
                "<tr><td>Men</td><td>Women</td><td>Men</td><td>Women</td></tr>"
                "<tr><td>'000 kg</td><td>'000 kg</td><td>'000 kg</td><td>'000 kg</td></tr>"
                "<tr><td>A</td><td>1</td><td>2</td><td>3</td><td>4</td></tr></table>")
    assert dec.records[0]["col_path"] == ["Agricultural population", "Men"]
    assert dec.records[0]["unit"] == "'000 kg"
    distinct = _html("<table><tr><td rowspan=2>Identity</td><td>Agricultural population</td>"
                     "<td>Total population</td><td>Agricultural population</td><td>Total population</td></tr>"
                     "<tr><td colspan=2>number</td><td colspan=2>percent</td></tr>"
                     "<tr><td>Total</td><td>15,765</td><td>1,673,785</td><td>100.0</td><td>100.0</td></tr></table>")
    assert [r["col_path"] for r in distinct.records] == [
        ["Agricultural population", "number"], ["Total population", "number"],
        ["Agricultural population", "percent"], ["Total population", "percent"]]
    assert [r["unit"] for r in distinct.records] == ["number", "number", "percent", "percent"]


def test_labelled_row_header_column_merged_down_the_header_is_a_row_dimension():
    dec = _html("<table><tr><td rowspan=3>Province</td><td colspan=2>Farm operators</td></tr>"
                "<tr><td>China</td><td>United States</td></tr>"
                "<tr><td colspan=2>percent</td></tr>"
                "<tr><td>Quebec</td><td>0.0</td><td>4.5</td></tr>"
                "<tr><td>Ontario</td><td>58.7</td><td>13.1</td></tr>"
                "<tr><td>Manitoba</td><td>0.0</td><td>4.6</td></tr>"
                "<tr><td>Alberta</td><td>0.0</td><td>17.0</td></tr></table>")
    assert dec.layout.L == 1 and not dec.layout.key_column
    assert dec.records[0]["row_path"] == ["Quebec"] and dec.records[0]["row_dims"] == ["Province"]
    assert dec.records[3]["col_path"] == ["Farm operators", "United States"]
    assert dec.records[3]["unit"] == "percent"


def test_second_labelled_row_header_column_is_forward_filled_not_data():
    dec = _html("<table><tr><td rowspan=2>Type</td><td rowspan=2>Country</td><td colspan=2>2012</td></tr>"
                "<tr><td>Quantity</td><td>Value</td></tr>"
                "<tr><td rowspan=2>Agaricus</td><td>United States</td><td>30,110</td><td>106,509</td></tr>"
                "<tr><td>Japan</td><td>14</td><td>568</td></tr></table>")
    assert dec.layout.L == 2
    assert dec.lines()[2] == "Agaricus > Japan | 2012 > Quantity = 14"
    assert dec.row_dims == ["Type", "Country"]


def test_a_text_column_left_of_text_data_stays_a_data_column():
    # The AITQA convention: a labelled column beside Yes/No data is data, not a row header.
    dec = _html("<table><tr><td rowspan=2></td><td rowspan=2>Agreement</td><td colspan=2>Codeshare</td></tr>"
                "<tr><td>Ours</td><td>Theirs</td></tr>"
                "<tr><td>American</td><td>Yes</td><td>Yes</td><td>No</td></tr>"
                "<tr><td>British</td><td>Yes</td><td>No</td><td>No</td></tr></table>")
    assert dec.layout.L == 1
    assert _paths(dec)[(2, 1)] == (["American"], ["Agreement"])


def test_rank_column_before_a_labelled_row_header_column_is_part_of_the_row_path():
    rows = "".join(f"<tr><td>{i}</td><td>Food {i}</td><td>{10 - i}.5</td><td>{9 - i}.1</td></tr>" for i in range(1, 5))
    dec = _html("<table><tr><td rowspan=2>Rank</td><td rowspan=2>Food category</td><td colspan=2>2004</td></tr>"
                f"<tr><td>Mean</td><td>Median</td></tr>{rows}</table>")
    assert dec.layout.L == 2
    assert dec.lines()[0] == "1 > Food 1 | 2004 > Mean = 9.5"


def test_units_row_inside_the_body_sets_the_unit_of_its_section():
    dec = _xlsx([[None, "2004", "2015"],
                 ["Percentage consuming", None, None], [None, "%", None], ["Water", "73.1", "88.1"],
                 ["Quantity consumed", None, None], [None, "grams", None], ["Water", "411", "508"]],
                merges=["B3:C3", "B6:C6"], indent={"A4": 1, "A7": 1}, bold=("A2", "A5"))
    assert dec.lines() == ["Percentage consuming > Water | 2004 = 73.1", "Percentage consuming > Water | 2015 = 88.1",
                           "Quantity consumed > Water | 2004 = 411", "Quantity consumed > Water | 2015 = 508"]
    assert [r["unit"] for r in dec.records] == ["%", "%", "grams", "grams"]


def test_a_year_over_every_column_restated_in_the_body_heads_row_blocks():
    dec = _html("<table><tr><td rowspan=3>Age</td><td colspan=3>2004</td></tr>"
                "<tr><td rowspan=2>%</td><td colspan=2>95% confidence interval</td></tr>"
                "<tr><td>From</td><td>To</td></tr>"
                "<tr><td>Total</td><td>23.2</td><td>21.9</td><td>24.5</td></tr>"
                "<tr><td>2 to 3</td><td>5.7</td><td>3.6</td><td>8.7</td></tr>"
                "<tr><td></td><td colspan=3><b>2015</b></td></tr>"
                "<tr><td>Total</td><td>30.7</td><td>29.0</td><td>32.4</td></tr></table>")
    assert dec.lines()[0] == "2004 > Total | % = 23.2"
    assert dec.lines()[2] == "2004 > Total | 95% confidence interval > To = 24.5"
    assert dec.lines()[-1] == "2015 > Total | 95% confidence interval > To = 32.4"
    assert all(r["text"] != "2015" for r in dec.records)
    assert dec.row_dims == ["Age"]  # the corner label of the top row, which became a block row
    assert dec.records[0]["row_dims"] == ["Age"] and dec.trees()["row_dims"] == ["Age"]


def test_a_section_ends_where_a_row_resumes_the_list_it_interrupted():
    dec = _html("<table><tr><td></td><td>2004</td></tr>"
                "<tr><td>Percentage overweight</td><td>33.1</td></tr>"
                "<tr><td>Percentage obese</td><td>20.5</td></tr>"
                "<tr><td><b>Highest level of education</b></td><td colspan=1></td></tr>"
                "<tr><td>Postsecondary diploma</td><td>70.8</td></tr>"
                "<tr><td>Bachelor's degree</td><td>26.6</td></tr>"
                "<tr><td>Percentage immigrant</td><td>20.2</td></tr></table>")
    lines = dec.lines()
    assert lines[2] == "Highest level of education > Postsecondary diploma | 2004 = 70.8"
    assert lines[-1] == "Percentage immigrant | 2004 = 20.2"
    assert [c.kind for c in dec.cases if c.kind == "section-end"] == ["section-end"]


def test_footnote_marks_notes_totals_and_spacer_rows():
    dec = _xlsx([["Table 1: Emissions, 2010 and 2015", None, None],
                 [None, None, None],
                 [None, "2010", "2015 r"],
                 [None, "kilotonnes", None],
                 ["Total emissions", "732,759", "767,289"],
                 ["Households", "329,243", "F"],
                 ["Motor fuel", "76,313", ".."],
                 [None, None, None],
                 ["Note: r revised; F too unreliable to be published.", None, None],
                 ["Source: Statistics Canada.", None, None]],
                merges=["A1:C1", "A3:A4", "B4:C4"], indent={"A7": 1})
    assert dec.captions() == ["Table 1: Emissions, 2010 and 2015"]
    assert dec.notes() == ["Note: r revised; F too unreliable to be published.", "Source: Statistics Canada."]
    assert dec.lines()[0] == "Total emissions | 2010 = 732,759"
    assert dec.lines()[1] == "Total emissions | 2015 r = 767,289"
    assert dec.lines()[3] == "Households | 2015 r = F"
    assert dec.lines()[-1] == "Households > Motor fuel | 2015 r = .."
    assert {r["unit"] for r in dec.records} == {"kilotonnes"}
    assert dec.records[0]["total"] is True


def _csv(text: str, **kw):
    return decompose(load_grid(text.encode("utf-8"), fmt="csv"), **kw)


def test_a_blank_filled_row_header_column_makes_the_labelled_column_beside_it_a_row_header_too():
    text = "Sex,Age,2019,2020\nMales,15-24,100,90\n,25-54,500,480\nFemales,15-24,95,85\n,25-54,510,470\n"
    expected = ["Males > 15-24 | 2019 = 100", "Males > 15-24 | 2020 = 90", "Males > 25-54 | 2019 = 500",
                "Males > 25-54 | 2020 = 480", "Females > 15-24 | 2019 = 95", "Females > 15-24 | 2020 = 85",
                "Females > 25-54 | 2019 = 510", "Females > 25-54 | 2020 = 470"]
    dec = _csv(text)
    assert dec.layout.L == 2 and dec.lines() == expected
    assert dec.row_dims == ["Sex", "Age"]
    rows = [line.split(",") for line in text.strip().split("\n")]
    xlsx = _xlsx([[v or None for v in row] for row in rows])
    assert xlsx.layout.L == 2 and xlsx.lines() == expected


def test_a_blank_row_header_is_filled_from_above_even_when_header_cols_is_too_small():
    dec = _csv("Sex,Age,2019,2020\nMales,15-24,100,90\n,25-54,500,480\n", header_cols=1)
    assert dec.lines()[3:] == ["Males | Age = 25-54", "Males | 2019 = 500", "Males | 2020 = 480"]


def test_a_row_label_naming_another_unit_overrides_the_header_units_row():
    dec = _xlsx([["Seeded area", "Canola", "Barley"],
                 [None, "thousand of acres", None],
                 ["2018", None, None],
                 ["March", "21,383", "6,059"], ["June", "22,740", "6,499"], ["% Difference", "6.3", "7.3"],
                 ["Difference", "1,357", "440"],
                 ["2017", None, None],
                 ["March", "22,387", "5,880"], ["Percentage change", "2.0", "-1.9"]],
                merges=["A1:A2", "B2:C2"], bold=("A3", "A8"))
    units = {(r["row_path"][-1], r["col_path"][-1]): r.get("unit") for r in dec.records}
    assert units[("March", "Canola")] == "thousand of acres"
    assert units[("% Difference", "Barley")] == "%"
    assert units[("Percentage change", "Canola")] == "%"
    assert units[("Difference", "Canola")] == "thousand of acres"  # no unit word: the header's unit holds
    same = _xlsx([[None, "Canola"], [None, "percent"], ["March", "2.0"], ["% of total", "3.0"]], merges=["A1:A2"])
    assert {r.get("unit") for r in same.records} == {"percent"}  # the same unit: the header's label is kept


def test_notes_under_the_first_table_on_a_sheet_stay_with_it_not_with_the_next():
    rows = [["Table 1: Sales", None, None], [], [None, "2023", "2024 r"], ["North", 10, 12], ["South", 7, 9], [],
            ["Note: r revised.", None, None], ["Source: Sales survey.", None, None], [],
            ["Table 2: Staff", None, None], [None, "Men", "Women"], ["North", 3, 4], ["South", 5, 6]]
    wb = openpyxl.Workbook()
    for row in rows:
        wb.active.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    notices: list[str] = []
    first = decompose(load_grid(buf.getvalue(), fmt="xlsx", notices=notices))
    assert any("holds 2 tables (A1:C8, A10:C13)" in n for n in notices), notices
    assert first.notes() == ["Note: r revised.", "Source: Sales survey."]
    second = decompose(load_grid(buf.getvalue(), fmt="xlsx", cell_range="A10:C13"))
    assert second.notes() == [] and second.captions() == ["Table 2: Staff"]
    # a note line and the next table's title in one island: the note goes up, the title down
    rows[8:9] = []
    wb = openpyxl.Workbook()
    for row in rows:
        wb.active.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    notices.clear()
    load_grid(buf.getvalue(), fmt="xlsx", notices=notices)
    assert any("holds 2 tables (A1:C8, A9:C12)" in n for n in notices), notices


def test_lines_keep_the_form_path_equals_value_and_units_live_in_lineage():
    dec = _xlsx([[None, "2001"], [None, "acres"], ["Fenugreek", "179"]], merges=["A1:A2"])
    assert dec.lines() == ["Fenugreek | 2001 = 179"]  # documented: the unit is a lineage field
    assert dec.records[0]["unit"] == "acres"
