"""Step labels from line findings, fix diffs and ``# ruleid:`` annotations (SecCodePRM reconstruction).

The paper labels steps with static-analyzer findings: a step is vulnerable when a finding
overlaps it. We implement that mapping for any line ranges (bandit, semgrep, template ground
truth) and add two other sources: a vulnerable/fixed pair (a line diff; the steps of the
vulnerable version that the fix deletes or changes, or where it inserts lines, are vulnerable)
and semgrep-test style ``# ruleid: ID`` comments (the next code line is vulnerable; ``# ok:``
lines are not). Modes: ``local`` (only overlapping steps) and ``monotone`` (every step from
the first vulnerable one on — once code is vulnerable, every prefix after it is).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

from mlx26.core.common.errors import InputError
from mlx26.core.score_code.segment import Step, split_lines

LABEL_MODES = ("local", "monotone")
_RULEID = re.compile(r"#\s*(?:ruleid|todoruleid)\s*:")


def step_labels(steps: Sequence[Step], ranges: Iterable[tuple[int, int]], mode: str = "local") -> list[int]:
    """1 for a vulnerable step, 0 for a safe one; ``ranges`` are inclusive 1-based line ranges."""
    if mode not in LABEL_MODES:
        raise InputError(f"unknown label mode '{mode}'.", "choose one of: " + ", ".join(LABEL_MODES))
    spans = list(ranges)
    labels = [int(any(a <= s.end_line and b >= s.start_line for a, b in spans)) for s in steps]
    if mode == "monotone" and 1 in labels:
        first = labels.index(1)
        labels = [0] * first + [1] * (len(labels) - first)
    return labels


def covered_lines(steps: Sequence[Step], labels: Sequence[int]) -> set[int]:
    """The lines of the vulnerable steps."""
    return {n for s, y in zip(steps, labels, strict=True) if y for n in range(s.start_line, s.end_line + 1)}


def diff_ranges(vulnerable: str, fixed: str) -> list[tuple[int, int]]:
    """Line ranges of ``vulnerable`` that the fix changes or deletes (an insertion marks the line before it)."""
    a, b = split_lines(vulnerable), split_lines(fixed)
    ranges = []
    matcher = difflib.SequenceMatcher(None, [x.strip() for x in a], [x.strip() for x in b], autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            ranges.append((i1 + 1, i2))
        elif tag == "insert":
            line = max(1, min(i1, len(a)))  # the fix adds a check: the code before it was missing it
            ranges.append((line, line))
    return ranges


def annotation_ranges(text: str) -> list[tuple[int, int]]:
    """Lines flagged by ``# ruleid:`` comments (the comment's next non-comment, non-blank line)."""
    lines = split_lines(text)
    out = []
    for n, line in enumerate(lines, 1):
        if _RULEID.search(line):
            target = n + 1
            while target <= len(lines) and (not lines[target - 1].strip() or
                                            lines[target - 1].lstrip().startswith("#")):
                target += 1
            if target <= len(lines):
                out.append((target, target))
    return out
