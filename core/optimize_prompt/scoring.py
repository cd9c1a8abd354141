"""Answer extraction and scorers (exact, number, mc) shared by ``eval`` and the self-derived references.

Our own conventions (the paper gives none): an explicit final line ``Answer: X`` (or GSM8K's
``#### X``) wins; otherwise a number answer is the last number in the text, an option letter the
last ``(X)``, an exact answer the last non-empty line. A text with nothing extractable is
*unparseable*: scored as wrong and counted apart.
"""

from __future__ import annotations

import re

_ANSWER = re.compile(r"(?:^|\n)\s*(?:final\s+)?answer\s*[:：]\s*(.+?)\s*$", re.I | re.M)
_HASHES = re.compile(r"####\s*(.+?)\s*$", re.M)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
_LETTER = re.compile(r"\(([A-R])\)")
_BARE_LETTER = re.compile(r"^\(?([A-R])\)?[.:]?$")


def _explicit(text: str) -> str | None:
    hits = _ANSWER.findall(text) or _HASHES.findall(text)
    return hits[-1].strip() if hits else None


def parse_number(text: str) -> float | None:
    hits = _NUMBER.findall(text.replace("$", ""))
    if not hits:
        return None
    try:
        return float(hits[-1].replace(",", ""))
    except ValueError:
        return None


def extract(text: str, answer_format: str) -> str | None:
    """The answer in a model's text as a normalised string, or None (unparseable)."""
    text = text or ""
    explicit = _explicit(text)
    if answer_format == "number":
        value = parse_number(explicit if explicit is not None else text)
        if value is None and explicit is not None:
            value = parse_number(text)
        return None if value is None else format_number(value)
    if answer_format == "mc":
        for source in ([explicit] if explicit else []) + [text]:
            bare = _BARE_LETTER.match(source.strip())
            if bare:
                return bare.group(1)
            letters = _LETTER.findall(source)
            if letters:
                return letters[-1]
        return None
    if explicit is not None:
        return normalise(explicit)
    lines = [line for line in text.splitlines() if line.strip()]
    return normalise(lines[-1]) if lines else None


def format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6g}"


def normalise(text: str) -> str:
    return " ".join(text.strip().strip(".").lower().split())


def label_answer(label: str, answer_format: str) -> str | None:
    """A label in the same normal form (GSM8K's worked answer keeps only its ``#### N``)."""
    return extract(str(label), answer_format)


def correct(prediction: str | None, label: str | None, answer_format: str) -> bool:
    if prediction is None or label is None:
        return False
    if answer_format == "number":
        a, b = parse_number(prediction), parse_number(label)
        return a is not None and b is not None and abs(a - b) <= 1e-6 * max(1.0, abs(b))
    return prediction == label
