"""Cell typing: numbers in their many spellings, placeholders, years, text (hand-checked values)."""

from __future__ import annotations

import pytest
from mlx26.core.table_decompose.cells import (
    EMPTY,
    NUMBER,
    PLACEHOLDER,
    TEXT,
    YEAR,
    is_total_label,
    is_unit_label,
    label_of,
    parse_cell,
)


@pytest.mark.parametrize(("text", "number", "unit", "flag"), [
    ("53", 53, None, None),
    ("1,234", 1234, None, None),
    ("1,234,567.5", 1234567.5, None, None),
    ("1 234", 1234, None, None),
    ("1\u202f234", 1234, None, None),
    ("12.5%", 12.5, "%", None),
    ("11.7 %", 11.7, "%", None),
    ("(0.4)%", -0.4, "%", None),
    ("$(1,610)", -1610, "$", None),
    ("(12,760)", -12760, None, None),
    ("\u22125", -5, None, None),
    ("\u2212 3.5", -3.5, None, None),
    ("-7", -7, None, None),
    ("€1,000", 1000, "€", None),
    ("13.33¢", 13.33, "¢", None),
    ("12.4E", 12.4, None, "E"),
    ("53 r", 53, None, "r"),
    (".5", 0.5, None, None),
    ("\u00a0\u00a042", 42, None, None),
])
def test_numbers(text, number, unit, flag):
    typed = parse_cell(text)
    assert typed.kind == NUMBER
    assert typed.number == pytest.approx(number) and type(typed.number) is type(number)
    assert typed.unit == unit and typed.flag == flag


@pytest.mark.parametrize("text", ["..", "...", "…", "x", "F", "—", "–", "-", "n/a", "N/A", "NA"])
def test_placeholders(text):
    assert parse_cell(text).kind == PLACEHOLDER


@pytest.mark.parametrize("text", ["2004", "1999", "2100"])
def test_years(text):
    typed = parse_cell(text)
    assert typed.kind == YEAR and typed.number == int(text)


@pytest.mark.parametrize("text", ["Food alone", "737-700", "2017 (a)", "Q1 2019", "(12", "12)", "1,23", "$", "%",
                                  "1.2.3", "Total", "3rd", "12 FF"])
def test_text(text):
    assert parse_cell(text).kind == TEXT


@pytest.mark.parametrize("text", ["", "   ", "\u00a0"])
def test_empty(text):
    assert parse_cell(text).kind == EMPTY


def test_label_collapses_whitespace_and_padding():
    assert label_of("\u00a0\u00a0Food   alone\n ") == "Food alone"


@pytest.mark.parametrize(("text", "expected"), [("(in millions)", True), ("$", True), ("%", True), ("percent", True),
                                                ("(In millions, except percentage changes)", True),
                                                ("number", True), ("Mean grams", False), ("2018", False)])
def test_unit_labels(text, expected):
    assert is_unit_label(text) is expected


@pytest.mark.parametrize(("label", "expected"), [("Total", True), ("Total current assets", True), ("All ages", True),
                                                 ("Grand total", True), ("Operating expenses, total", True),
                                                 ("Totally new", False), ("Allied pilots", False), ("Food", False)])
def test_total_labels(label, expected):
    assert is_total_label(label) is expected
