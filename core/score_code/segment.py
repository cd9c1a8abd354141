"""Segmentation of source code into steps (SecCodePRM, Yu et al., ICML 2026, arXiv 2602.10418).

The paper scores code step by step, a step being a blank-line separated block. We add three
more segmentations and make all of them *streaming-safe*: segmenting a line prefix of a file
gives the file's steps up to the last one, and that last one may still be open (a prefix of
the full step). Reconstructed here (the paper only describes the block split):

* ``block``   — maximal runs of non-blank lines (the paper's choice);
* ``line``    — one step per non-blank line;
* ``logical`` — Python logical lines from :mod:`tokenize` (comment lines join the next one);
  an unfinished prefix (open bracket or string) makes the rest one open step, and an
  indentation error makes the rest line steps;
* ``ast``     — top-level statements: from :func:`ast.parse` when the code parses, else from
  the same grouping of logical lines by indentation (so a prefix of a file still gives a
  prefix of its steps); tokenizer errors fall back to line steps.

Line numbers are 1-based and inclusive; ``text`` holds the step's lines without line ends.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass

from mlx26.core.common.errors import InputError
from mlx26.core.score_code.spec import SEGMENT_MODES as MODES

# Keywords that continue the previous top-level statement (if/try/for/while/match clauses).
_CONTINUATIONS = ("else", "elif", "except", "finally")
# Only CR, LF and CRLF end lines (as for Python and the analyzers; str.splitlines also splits on \f, \x1c, …).
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Step:
    index: int
    start_line: int
    end_line: int
    text: str


def _steps(lines: list[str], spans: list[tuple[int, int]]) -> list[Step]:
    return [Step(i, a, b, "\n".join(lines[a - 1:b])) for i, (a, b) in enumerate(spans)]


def _blank(line: str) -> bool:
    return not line.strip()


def line_spans(lines: list[str], first: int = 1) -> list[tuple[int, int]]:
    return [(n, n) for n in range(first, len(lines) + 1) if not _blank(lines[n - 1])]


def block_spans(lines: list[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = None
    for n, line in enumerate(lines, 1):
        if _blank(line):
            if start is not None:
                spans.append((start, n - 1))
                start = None
        elif start is None:
            start = n
    if start is not None:
        spans.append((start, len(lines)))
    return spans


def _logical(lines: list[str]) -> tuple[list[tuple[int, int]], int | None, bool]:
    """Logical lines as (start, end); the first line of an open tail; whether tokenize failed.

    A comment-only line belongs to the logical line after it. The open tail is an unfinished
    statement at the end (bracket or string left open), or everything after an indentation error.
    """
    text = "".join(line + "\n" for line in lines)
    out: list[tuple[int, int]] = []
    start: int | None = None
    skip = (tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in skip:
                continue
            if tok.type == tokenize.NEWLINE:
                if start is not None:
                    out.append((start, tok.start[0]))
                start = None
            elif start is None:
                start = tok.start[0]
    except tokenize.TokenError:  # EOF inside a bracket or a string: an open statement
        return out, start, False
    except (IndentationError, SyntaxError):
        return out, (start if start is not None else (out[-1][1] + 1 if out else 1)), True
    return out, start, False  # start is set only by trailing comment lines


def logical_spans(lines: list[str]) -> list[tuple[int, int]]:
    found, open_from, failed = _logical(lines)
    spans = list(found)
    if open_from is not None:
        last = _last_nonblank(lines)
        if failed:
            spans += line_spans(lines[:last], open_from)
        elif last >= open_from:
            spans.append((open_from, last))
    return spans


def _last_nonblank(lines: list[str]) -> int:
    n = len(lines)
    while n > 0 and _blank(lines[n - 1]):
        n -= 1
    return n


def _decorator_or_continuation(line: str) -> tuple[bool, bool]:
    stripped = line.lstrip()
    word = stripped.split(None, 1)[0].rstrip(":") if stripped else ""
    return stripped.startswith("@"), word in _CONTINUATIONS


def toplevel_spans(lines: list[str]) -> list[tuple[int, int]]:
    """Group logical lines into top-level statements by indentation (tolerant of bad code)."""
    found, open_from, failed = _logical(lines)
    spans: list[list[int]] = []
    joins_next = False
    for a, b in found:
        first_code = next((n for n in range(a, b + 1) if lines[n - 1].strip()[:1] not in ("#", "")), a)
        line = lines[first_code - 1]
        top = not line[:1].isspace()
        decorator, continuation = _decorator_or_continuation(line)
        if spans and (joins_next or not top or continuation):
            spans[-1][1] = b
        else:
            spans.append([a, b])
        joins_next = top and decorator
    if open_from is not None:
        last = _last_nonblank(lines)
        if failed:
            spans += [[a, b] for a, b in line_spans(lines[:last], open_from)]
        elif last >= open_from:
            line = lines[open_from - 1]
            if spans and (joins_next or line[:1].isspace() or _decorator_or_continuation(line)[1]):
                spans[-1][1] = last
            else:
                spans.append([open_from, last])
    return [(a, b) for a, b in spans]


def ast_spans(lines: list[str]) -> tuple[list[tuple[int, int]], bool]:
    """Top-level statement spans, and whether ast.parse accepted the code."""
    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError):
        return toplevel_spans(lines), False
    spans: list[tuple[int, int]] = []
    prev_end = 0
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        start = prev_end + 1
        while start < first and (_blank(lines[start - 1])):
            start += 1
        # Comment lines right before a statement belong to it (as in the logical split).
        start = start if all(lines[n - 1].strip()[:1] in ("#", "") for n in range(start, first)) else first
        end = node.end_lineno or node.lineno
        spans.append((start, end))
        prev_end = end
    return spans, True


def split_lines(text: str) -> list[str]:
    """Lines without their ends; CRLF, CR and LF all end a line (numbers match editors)."""
    lines = _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def segment(text: str | list[str], mode: str = "block") -> list[Step]:
    """Steps of ``text`` (or of a list of lines) for one of :data:`MODES`."""
    if mode not in MODES:
        raise InputError(f"unknown segmentation '{mode}'.", "choose one of: " + ", ".join(MODES))
    lines = split_lines(text) if isinstance(text, str) else list(text)
    if mode == "block":
        spans = block_spans(lines)
    elif mode == "line":
        spans = line_spans(lines)
    elif mode == "logical":
        spans = logical_spans(lines)
    else:
        spans = ast_spans(lines)[0]
    return _steps(lines, spans)


def parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True
