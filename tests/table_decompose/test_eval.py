"""Evaluation: AITQA targets, metric arithmetic on hand-made cases, HiTab gold trees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mlx26.core.table_decompose import decompose, load_grid
from mlx26.core.table_decompose.aitqa import load_questions, load_tables
from mlx26.core.table_decompose.cells import label_of
from mlx26.core.table_decompose.evaluate import (
    RENDERS,
    _prefixes,
    compare,
    eval_aitqa,
    eval_hitab,
    render_bytes,
    summarise,
)
from mlx26.core.table_decompose.examples import EXAMPLES, TABLES, example_path, example_table, make_examples

from tests._data import shared_data

pytest.importorskip("openpyxl")


@pytest.fixture(scope="module")
def aitqa():
    return shared_data("aitqa")


def test_shared_aitqa_copy_is_complete_and_licensed(aitqa):
    assert (aitqa / "LICENSE").read_text().count("Community Data License Agreement") >= 1
    assert "CDLA-Sharing-1.0" in (aitqa / "LICENSE").read_text()
    assert "IBM/AITQA" in (aitqa / "SOURCE.md").read_text()
    tables, questions = load_tables(aitqa), load_questions(aitqa)
    assert len(tables) == 113 and len(questions) == 515
    assert sorted(t.id for t in tables if not t.consistent) == ["tab-16", "tab-26", "tab-38"]


def test_aitqa_targets_merged_and_blank_filled(aitqa):
    # Acceptance: both-paths exact match ≥ 0.95 (XLSX, merged + indentation) and ≥ 0.90 (blank-filled CSV).
    result = eval_aitqa(aitqa, renders=("xlsx", "csv"))
    xlsx, csv = result["renders"]["xlsx"]["overall"], result["renders"]["csv"]["overall"]
    assert xlsx["tables"] == csv["tables"] == 110 and xlsx["cells"] == 5157
    assert xlsx["both_paths_em"] >= 0.95 and csv["both_paths_em"] >= 0.90
    assert xlsx["L_accuracy"] >= 0.95 and xlsx["H_accuracy"] >= 0.9
    assert result["shape_inconsistent_skipped"] == ["tab-16", "tab-26", "tab-38"]


def test_aitqa_subset_per_table_and_unknown_id(aitqa):
    result = eval_aitqa(aitqa, renders=("html", "md"), tables=["tab-5", "tab-67"], per_table=True)
    for render in ("html", "md"):
        rows = result["renders"][render]["per_table"]
        assert [r["id"] for r in rows] == ["tab-5", "tab-67"]
        assert all(r["both_paths_em"] == 1.0 for r in rows)
    with pytest.raises(ValueError, match="unknown AITQA table id 'tab-999'"):
        eval_aitqa(aitqa, tables=["tab-999"])


def test_aitqa_has_no_default_folder():
    from mlx26.core.common.errors import InputError

    with pytest.raises(InputError, match="no AITQA folder given") as info:
        load_tables(None)  # type: ignore[arg-type]
    assert "aitqa_tables.jsonl" in (info.value.hint or "")


def test_no_dataset_copy_ships_in_the_package():
    import mlx26.core.table_decompose as pkg

    data = Path(pkg.__file__).parent / "data"
    assert sorted(p.name for p in data.iterdir()) == ["examples"]
    assert not [p for p in (data / "examples").iterdir() if "aitqa" in p.name.lower()]


@pytest.mark.parametrize("name", sorted(TABLES))
def test_generated_examples_decompose_to_their_own_paths(name):
    table = example_table(name)
    assert {f"{name}-html", f"{name}-xlsx", f"{name}-csv"} <= set(EXAMPLES)
    assert max(len(p) for p in table.col_paths) >= 2 and max(len(p) for p in table.row_paths) >= 2
    for render in RENDERS:
        raw, fmt, rendered = render_bytes(table, render)
        assert any(c.colspan > 1 for c in rendered.cells)  # merged (or blank-filled) column headers
        dec = decompose(load_grid(raw, fmt=fmt, name=f"{name}.{render}"))
        gold = {rendered.data_pos[(i, j)]: (table.row_paths[i], table.col_paths[j])
                for i, row in enumerate(table.data) for j, value in enumerate(row) if label_of(value)}
        metrics = compare(dec, gold, _prefixes(table.col_paths), _prefixes(table.row_paths), rendered.H, rendered.L)
        assert metrics["both_match"] == metrics["cells"] > 0, (render, metrics["misses"][:2])
        assert (metrics["H_pred"], metrics["L_pred"]) == (metrics["H_gold"], metrics["L_gold"])


def test_shipped_examples_match_their_generator(tmp_path):
    written = make_examples(tmp_path)
    assert sorted(p.name for p in written) == sorted(v for v in EXAMPLES.values() if v != "statcan_sugars.html")
    for path in written:
        shipped = example_path(next(k for k, v in EXAMPLES.items() if v == path.name))
        if path.suffix == ".xlsx":  # openpyxl stamps the time: compare what the reader sees
            assert (decompose(load_grid(path.read_bytes(), fmt="xlsx")).records
                    == decompose(load_grid(shipped.read_bytes(), fmt="xlsx")).records)
        else:
            assert path.read_bytes() == shipped.read_bytes(), path.name


def test_metrics_arithmetic_on_a_forced_wrong_header():
    csv = b",Sales,\n,2023,2024\nNorth,10,12\nSouth,7,\n"
    gold = {(2, 1): (["North"], ["Sales", "2023"]), (2, 2): (["North"], ["Sales", "2024"]),
            (3, 1): (["South"], ["Sales", "2023"])}
    col_nodes = _prefixes([["Sales", "2023"], ["Sales", "2024"]])
    row_nodes = _prefixes([["North"], ["South"]])
    good = compare(decompose(load_grid(b"" + csv, fmt="csv")), gold, col_nodes, row_nodes, 2, 1)
    assert (good["row_match"], good["col_match"], good["both_match"]) == (3, 3, 3)
    assert good["col_edges"] == [3, 0, 0] and good["row_edges"] == [2, 0, 0]
    # Forcing H = 1 makes row 1 ("2023", "2024") data: column paths lose their leaf.
    bad = compare(decompose(load_grid(csv, fmt="csv"), header_rows=1), gold, col_nodes, row_nodes, 2, 1)
    assert (bad["row_match"], bad["col_match"], bad["both_match"]) == (3, 0, 0)
    assert bad["col_edges"] == [1, 0, 2]  # only "Sales" is right; "Sales > 2023/2024" are missing
    summary = summarise([{**good, "misses": []}, {**bad, "misses": []}])
    assert summary["both_paths_em"] == 0.5 and summary["H_accuracy"] == 0.5
    assert summary["col_edge_f1"] == pytest.approx(round(2 * 4 / (2 * 4 + 0 + 2), 4))


def test_hitab_round_trip_scores_perfectly(tmp_path):
    dec = decompose(load_grid(example_path("statcan").read_bytes(), fmt="html"))
    (tmp_path / "statcan.json").write_text(json.dumps(dec.hitab()))
    result = eval_hitab(tmp_path, per_table=True)
    overall = result["overall"]
    assert overall["tables"] == 1 and overall["cells"] == len(dec.records)
    assert overall["both_paths_em"] == 1.0 and overall["HL_accuracy"] == 1.0
    assert overall["col_edge_f1"] == 1.0 and overall["row_edge_f1"] == 1.0


def test_hitab_gold_that_disagrees_is_scored_against():
    # Hand-written HiTab table whose gold row tree is flat although the labels are indented.
    doc = {"title": "t", "texts": [["", "2020", "2021"], ["Total", "3", "4"], ["\u00a0\u00a0Men", "1", "2"]],
           "merged_regions": [], "top_header_rows_num": 1, "left_header_columns_num": 1,
           "top_root": {"row_index": -1, "column_index": -1, "children": [
               {"row_index": 0, "column_index": 1, "children": []},
               {"row_index": 0, "column_index": 2, "children": []}]},
           "left_root": {"row_index": -1, "column_index": -1, "children": [
               {"row_index": 1, "column_index": 0, "children": []},
               {"row_index": 2, "column_index": 0, "children": []}]}}
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.json"
        path.write_text(json.dumps(doc))
        overall = eval_hitab(path)["overall"]
    # We nest "Men" under "Total": its two cells miss their row path; all column paths match.
    assert overall["cells"] == 4 and overall["row_path_em"] == 0.5 and overall["col_path_em"] == 1.0
    assert overall["row_edge_f1"] == pytest.approx(round(2 * 1 / (2 * 1 + 1 + 1), 4))


def test_hitab_eval_without_files():
    with pytest.raises(ValueError, match="no HiTab table JSON"):
        eval_hitab("/nonexistent/folder")


def test_h_counts_labelled_header_rows_alike_for_gold_and_prediction():
    # the second header row only holds slots covered by vertical merges: no label is anchored there
    html = ("<table><tr><td rowspan=2>Region</td><td rowspan=2>2023</td><td rowspan=2>2024</td></tr><tr></tr>"
            "<tr><td>North</td><td>10</td><td>12</td></tr><tr><td>South</td><td>7</td><td>9</td></tr></table>")
    dec = decompose(load_grid(html.encode(), fmt="html"))
    gold = {(2, 1): (["North"], ["2023"]), (2, 2): (["North"], ["2024"]),
            (3, 1): (["South"], ["2023"]), (3, 2): (["South"], ["2024"])}
    nodes = _prefixes([["2023"], ["2024"]]), _prefixes([["North"], ["South"]])
    for gold_rows in ([0], [0, 1]):  # an annotator may or may not include the covered row
        m = compare(dec, gold, *nodes, len(gold_rows), 1, header_rows=gold_rows)
        assert m["H_gold"] == m["H_pred"] == 1


def test_column_edges_come_from_the_column_paths_so_a_units_level_counts_as_a_node():
    dec = decompose(load_grid((
        b"<table><tr><td rowspan=2>Identity</td><td>Agricultural population</td><td>Total population</td>"
        b"<td>Agricultural population</td><td>Total population</td></tr>"
        b"<tr><td colspan=2>number</td><td colspan=2>percent</td></tr>"
        b"<tr><td>Total</td><td>15,765</td><td>1,673,785</td><td>100.0</td><td>100.0</td></tr></table>"),
        fmt="html"))
    cols = [["Agricultural population", "number"], ["Total population", "number"],
            ["Agricultural population", "percent"], ["Total population", "percent"]]
    gold = {(2, j + 1): (["Total"], path) for j, path in enumerate(cols)}
    m = compare(dec, gold, _prefixes(cols), _prefixes([["Total"]]), 2, 1, header_rows=[0, 1])
    assert m["both_match"] == 4
    assert m["col_edges"] == [6, 0, 0]  # path scores and edge scores agree
