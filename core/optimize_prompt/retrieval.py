"""Adaptive retrieval of MR.PEA: BM25 over the user's docs folder (``rank-bm25``'s BM25Okapi).

The paper retrieves "external information" when meta-reasoning decides it needs it; with no
network we retrieve from a local folder. Every ``.md``/``.txt`` file is split into paragraphs
(blank-line separated, long ones cut at ~600 characters); tokens are lower-case words and numbers.
``rank-bm25`` (PyPI, Apache-2.0) does the scoring — the optional extra ``optimize-prompt``; a
passage with score ≤ 0 (no query word in it) is never returned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mlx26.core.common.errors import InputError

SUFFIXES = (".md", ".txt", ".rst")
MAX_PASSAGE = 600
_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@dataclass(frozen=True)
class Passage:
    source: str
    text: str


def split_passages(text: str) -> list[str]:
    out = []
    for block in re.split(r"\n\s*\n", text):
        block = " ".join(block.split())
        while len(block) > MAX_PASSAGE:
            cut = block.rfind(" ", 0, MAX_PASSAGE)
            cut = cut if cut > 0 else MAX_PASSAGE
            out.append(block[:cut])
            block = block[cut:].strip()
        if block:
            out.append(block)
    return out


class Corpus:
    def __init__(self, passages: list[Passage]):
        if not passages:
            raise InputError("the docs folder holds no text passages (.md, .txt, .rst).")
        from rank_bm25 import BM25Okapi

        self.passages = passages
        self.bm25 = BM25Okapi([tokenize(p.text) or ["∅"] for p in passages])

    @classmethod
    def from_folder(cls, folder: str) -> Corpus:
        root = Path(folder)
        if not root.is_dir():
            raise InputError(f"docs folder not found: {folder}")
        passages = []
        for path in sorted(p for p in root.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file()):
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{path}: not UTF-8 text.") from None
            passages += [Passage(path.relative_to(root).as_posix(), t) for t in split_passages(text)]
        return cls(passages)

    def scores(self, query: str) -> list[float]:
        return [float(s) for s in self.bm25.get_scores(tokenize(query))]

    def search(self, query: str, k: int = 2) -> list[tuple[Passage, float]]:
        scores = self.scores(query)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [(self.passages[i], scores[i]) for i in order[:k] if scores[i] > 0]
