"""Segmentation: the four modes, streaming safety on prefixes, tolerance of bad code, line numbers."""

from __future__ import annotations

import ast

import pytest
from mlx26.core.score_code.corpus import generate
from mlx26.core.score_code.segment import MODES, segment, split_lines

CODE = '''import os
# a comment
@decorator
def f(x,
      y):
    if x:
        return 1
    else:
        return 2

if a:
    pass
else:
    pass
s = """multi
line"""
'''


def spans(text, mode):
    return [(s.start_line, s.end_line) for s in segment(text, mode)]


def test_modes_on_known_code():
    assert spans(CODE, "block") == [(1, 9), (11, 16)]
    assert spans(CODE, "line") == [(n, n) for n in range(1, 17) if n != 10]
    assert spans(CODE, "logical") == [(1, 1), (2, 3), (4, 5), (6, 6), (7, 7), (8, 8), (9, 9), (11, 11), (12, 12),
                                      (13, 13), (14, 14), (15, 16)]
    assert spans(CODE, "ast") == [(1, 1), (2, 9), (11, 14), (15, 16)]


def test_ast_mode_matches_python_ast():
    """Independent reference: ast top-level statements (decorators included) end where the steps end."""
    for ex in generate(40, seed=3):
        tree = ast.parse(ex.text)
        assert [b for _, b in spans(ex.text, "ast")] == [n.end_lineno for n in tree.body]


def _is_step_prefix(short, full):
    """Every step of the prefix but the last equals the full one; the last is a prefix of its full step."""
    if not short:
        return True
    if short[:-1] != full[:len(short) - 1]:
        return False
    last, match = short[-1], full[len(short) - 1]
    return last.start_line == match.start_line and last.end_line <= match.end_line and \
        match.text.startswith(last.text)


@pytest.mark.parametrize("mode", MODES)
def test_streaming_safe_on_every_line_prefix(mode):
    for ex in generate(12, seed=5):
        lines = split_lines(ex.text)
        full = segment(ex.text, mode)
        for k in range(1, len(lines) + 1):
            assert _is_step_prefix(segment(lines[:k], mode), full), (mode, ex.id, k)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("text", ["def f(:\n  x = (1,\n", "if x:\n  a = 1\n b = 2\nc = 3\n", "x = '''open\n",
                                  ")))\n\n(((\n", "\x00\x01\n"])
def test_bad_code_never_crashes_and_covers_all_lines(mode, text):
    steps = segment(text, mode)
    covered = {n for s in steps for n in range(s.start_line, s.end_line + 1)}
    nonblank = {n for n, line in enumerate(split_lines(text), 1) if line.strip()}
    assert nonblank <= covered


def test_open_bracket_makes_the_rest_one_step():
    assert spans("a = 1\nb = f(1,\n  2,\n", "logical") == [(1, 1), (2, 3)]


def test_indentation_error_falls_back_to_lines():
    assert spans("if x:\n  a = 1\n b = 2\nc = 3\n", "logical") == [(1, 1), (2, 2), (3, 3), (4, 4)]


def test_crlf_and_cr_keep_line_numbers():
    text = "a = 1\r\n\r\nb = 2\rc = 3\n"
    assert spans(text, "line") == [(1, 1), (3, 3), (4, 4)]
    assert [s.text for s in segment(text, "line")] == ["a = 1", "b = 2", "c = 3"]
    # form feed is not a line end for Python or the analyzers
    assert len(split_lines("a = 1\x0cb\n")) == 1


def test_unknown_mode():
    with pytest.raises(ValueError, match="unknown segmentation"):
        segment("x", "sentence")
