"""The LLM-free retrieval benchmark: candidate strings per method, ranking, and the AITQA ratio (slow)."""

from __future__ import annotations

import pytest
from mlx26.core.table_decompose import decompose, load_grid
from mlx26.core.table_decompose.render import LogicalTable, layout, matrix, to_html
from mlx26.core.table_decompose.retrieval import (
    Candidate,
    correct,
    default_vectoriser,
    markdown_candidates,
    ohd_candidates,
    pandas_candidates,
    rank,
    run,
)

from tests._data import shared_data

pytest.importorskip("sklearn")
pytest.importorskip("pandas")
pytest.importorskip("lxml")

TABLE = LogicalTable(col_paths=[["Year Ended", "2019"], ["Year Ended", "2018"]],
                     row_paths=[["Revenue"], ["Regional expenses:", "Fuel"], ["Regional expenses:", "Other"]],
                     data=[["10", "9"], ["4", "3"], ["2", "1"]])


def _prepared():
    rendered = layout(TABLE, rows="indent")
    html = to_html(rendered)
    return rendered, html, matrix(rendered, indent_text=False)


def test_candidate_strings_per_method():
    rendered, html, texts = _prepared()
    ohd = ohd_candidates(decompose(load_grid(html.encode(), fmt="html")))
    assert [c.text for c in ohd][2:4] == ["Regional expenses: Fuel | Year Ended 2019",
                                         "Regional expenses: Fuel | Year Ended 2018"]
    pandas = pandas_candidates(html, texts, rendered.H)
    # pandas flattens the column labels but knows only the row's own label, not its section.
    assert ("Fuel Year Ended 2019", "4") in [(c.text, c.value) for c in pandas]
    md = markdown_candidates(texts, rendered.H)
    assert md[2].text == "| Fuel | 4 | 3 | Year Ended 2019" and md[2].value == "4"


def test_rank_and_correct():
    candidates = [Candidate("Revenue 2019", "10"), Candidate("Regional expenses Fuel 2019", "4")]
    best = rank("What were regional fuel expenses in 2019?", candidates, default_vectoriser)
    assert best is candidates[1] and correct(best, [" 4 "]) and not correct(best, ["10"])
    assert rank("anything", [], default_vectoriser) is None


def test_hierarchy_question_separates_ohd_from_pandas():
    rendered, html, texts = _prepared()
    question = "How much were the regional expenses for other items in 2018?"
    ohd = rank(question, ohd_candidates(decompose(load_grid(html.encode(), fmt="html"))), default_vectoriser)
    assert ohd is not None and ohd.value == "1"


def test_run_on_a_few_tables_reports_all_methods():
    result = run(shared_data("aitqa"), table_ids=["tab-5", "tab-67"])
    assert result["tables"] == 2 and result["questions"]["all"] > 0
    assert set(result["accuracy"]) == {"ohd", "pandas", "markdown"}
    assert all(0.0 <= v["all"] <= 1.0 for v in result["accuracy"].values())


@pytest.mark.slow
def test_full_benchmark_ratio_targets():
    result = run(shared_data("aitqa"))
    acc = result["accuracy"]
    assert result["questions"]["all"] == 503
    assert acc["ohd"]["all"] / acc["pandas"]["all"] >= 1.1
    assert acc["ohd"]["Yes"] / acc["pandas"]["Yes"] > acc["ohd"]["all"] / acc["pandas"]["all"]
