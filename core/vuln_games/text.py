"""Overlap metrics of the proxy-metric game: ROUGE-L (F1 of the longest common subsequence) and BLEU.

Part of the vulnerability-games reconstruction (arXiv 2602.12124). Our own implementations of the standard
definitions: ROUGE-L F1 = 2PR/(P+R) with P = LCS/|candidate|, R = LCS/|reference| (Lin 2004, β = 1);
sentence BLEU-4 = BP · exp(mean log p_n) with clipped n-gram precisions p_n, add-one smoothing for n ≥ 2
(Lin & Och 2004, "smoothing 2" of Chen & Cherry 2014) and brevity penalty BP = min(1, exp(1 - r/c)).
Tokens are lower-cased words and numbers. Tests check both against hand-computed values.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence, bit-parallel (Allison & Dix 1986; Hyyrö 2004): one bit per
    token of ``b`` in a Python integer, ``len(a)`` word-parallel updates, so O(|a|·|b|/64) machine-word
    operations instead of the O(|a|·|b|) table (a 16k-token pair takes well under a second). Identical to
    :func:`lcs_length_dp`, the textbook table, which the tests compare it against."""
    if not a or not b:
        return 0
    match: dict[str, int] = {}
    for j, y in enumerate(b):
        match[y] = match.get(y, 0) | (1 << j)
    mask = (1 << len(b)) - 1
    v = mask
    for x in a:
        u = v & match.get(x, 0)
        v = ((v + u) | (v - u)) & mask
    return len(b) - v.bit_count()


def lcs_length_dp(a: Sequence[str], b: Sequence[str]) -> int:
    """The textbook LCS table (O(|a|·|b|) time, O(|b|) memory): the reference :func:`lcs_length` is tested
    against."""
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def rouge_l(candidate: str | Sequence[str], reference: str | Sequence[str]) -> float:
    c = tokens(candidate) if isinstance(candidate, str) else list(candidate)
    r = tokens(reference) if isinstance(reference, str) else list(reference)
    lcs = lcs_length(c, r)
    if lcs == 0:
        return 0.0
    p, rec = lcs / len(c), lcs / len(r)
    return 2 * p * rec / (p + rec)


def bleu(candidate: str | Sequence[str], reference: str | Sequence[str], max_n: int = 4) -> float:
    c = tokens(candidate) if isinstance(candidate, str) else list(candidate)
    r = tokens(reference) if isinstance(reference, str) else list(reference)
    if not c or not r:
        return 0.0
    logs = []
    for n in range(1, max_n + 1):
        cand = Counter(tuple(c[i:i + n]) for i in range(len(c) - n + 1))
        ref = Counter(tuple(r[i:i + n]) for i in range(len(r) - n + 1))
        total = sum(cand.values())
        match = sum(min(k, ref[g]) for g, k in cand.items())
        if n == 1:
            if match == 0:
                return 0.0
            logs.append(math.log(match / total))
        else:
            logs.append(math.log((match + 1) / (total + 1)))
    bp = 1.0 if len(c) >= len(r) else math.exp(1 - len(r) / len(c))
    return bp * math.exp(sum(logs) / max_n)


def overlap(metric: str, candidate: str, reference: str) -> float:
    return rouge_l(candidate, reference) if metric == "rouge-l" else bleu(candidate, reference)
