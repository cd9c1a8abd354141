"""Cell typing for table decomposition: empty, number, placeholder, year or text.

Part of the reconstruction of Cao et al., "Orthogonal Hierarchical Decomposition for
Structure-Aware Table Understanding with LLMs" (ICML 2026, arXiv 2602.01969). The paper's
abstract only says cells are typed before the trees are induced; the categories and the
number grammar below are ours, written for statistical and financial tables:

* numbers with thousands separators (``1,234``, ``1 234``), decimals, ``%``, currency
  (``$ € £ ¥``, trailing ``¢``), ``(x)`` negatives, unicode minus / en dash, and quality-flag
  suffixes (StatCan ``A``–``E``, ``r`` revised, ``p`` preliminary);
* placeholders for missing values: ``.. ... … x F — – - n/a NA``;
* years (a bare four-digit 1800–2100, which headers use as labels, also with a revised /
  preliminary mark: ``2015 r``, ``2016p``);
* everything else is text.

``parse_cell`` never changes the string it is given; it only reads it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

EMPTY, NUMBER, PLACEHOLDER, YEAR, TEXT = "empty", "number", "placeholder", "year", "text"
KINDS = (EMPTY, NUMBER, PLACEHOLDER, YEAR, TEXT)

# Characters that only indent or pad a label: spaces, NBSP, thin/narrow/figure/ideographic spaces, tabs.
PAD_CHARS = " \t\u00a0\u2002\u2003\u2007\u2009\u202f\u3000"
PLACEHOLDERS = frozenset({"..", "...", "…", "x", "X", "F", "—", "–", "-", "−", "n/a", "N/A", "n.a.", "N.A.",
                          "NA", "na", "nil", "N/D", "n/d", ".", "--", "---"})
_MINUS = "-\u2212\u2013"  # hyphen-minus, unicode minus, en dash
_MINUS_CLASS = r"\-\u2212\u2013"  # the same, escaped for a character class
_GROUP = ",\u2009\u202f\u00a0 "  # thousands separators: comma, thin / narrow / no-break / plain space
_NUMBER_RE = re.compile(
    rf"""^(?P<sign>[+{_MINUS_CLASS}])?\s*
    (?P<cur>US\$|C\$|A\$|[$€£¥])?\s*
    (?P<open>\()?\s*
    (?P<sign2>[{_MINUS_CLASS}])?\s*
    (?P<cur2>[$€£¥])?\s*
    (?P<num>\d{{1,3}}(?:[{_GROUP}]\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
    \s*(?P<pct>%)?\s*(?P<close>\))?\s*(?P<pct2>%)?\s*(?P<cents>¢)?
    \s*(?P<flag>[A-E]|[rp]|\u1d31|\u1d3e|\u02b3|\u1d56)?\s*$""",
    re.VERBOSE,
)
_YEAR_RE = re.compile(r"^(1[89]\d\d|20\d\d|2100)$")
_FLAGGED_YEAR_RE = re.compile(r"^(1[89]\d\d|20\d\d|2100)\s?([rpe])$")
_PLAIN_RE = re.compile(r"(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?")
_UNIT_WORDS = re.compile(
    r"^\(?\s*(in\s+|\$\s*)?(millions?|thousands?|billions?|percent(age)?s?|per\s*cent|%|\$|¢|dollars?|number|"
    r"units?|grams?|kilograms?|kg|tonnes?|rates?|ratio|index|cents?|persons?|people|hours?|years?|days?|"
    r"people per|per \d[\d,]*)\b.*\)?$|^\(\s*(in|\$|%)\b.*\)$|^[$%¢]$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Typed:
    """The type of one cell string: ``kind`` and, for numbers and years, the parsed value."""

    kind: str
    number: int | float | None = None
    unit: str | None = None  # "%", "$", "¢", ... when the string carried one
    flag: str | None = None  # a quality-flag suffix such as "E"


_EMPTY = Typed(EMPTY)
_TEXT = Typed(TEXT)
_PLACEHOLDER = Typed(PLACEHOLDER)


def label_of(text: str) -> str:
    """The label of a cell: surrounding padding removed, internal whitespace runs collapsed."""
    return " ".join(text.split())


def leading_pad(text: str) -> int:
    """Number of leading padding characters (spaces, NBSP, ...): an indentation cue."""
    return len(text) - len(text.lstrip(PAD_CHARS))


def parse_cell(text: str) -> Typed:
    """Type one cell string; ``text`` is read, never altered."""
    s = text.strip(PAD_CHARS + "\r\n")
    if not s:
        return _EMPTY
    if s in PLACEHOLDERS:
        return _PLACEHOLDER
    first = s[0]
    if not (first.isdigit() or first in "+-\u2212\u2013($€£¥.UCA"):
        return _TEXT
    if len(s) == 4 and _YEAR_RE.match(s):
        return Typed(YEAR, int(s))
    flagged = _FLAGGED_YEAR_RE.match(s)
    if flagged:  # "2015 r", "2016p": a year label with a revised / preliminary mark (StatCan headers)
        return Typed(YEAR, int(flagged.group(1)), flag=flagged.group(2))
    plain = _PLAIN_RE.fullmatch(s)
    if plain:  # fast path: 1234, 1,234, 12.5
        digits = s.replace(",", "")
        return Typed(NUMBER, float(digits) if plain.group(2) else int(digits))
    m = _NUMBER_RE.match(s)
    if m is None or bool(m.group("open")) != bool(m.group("close")):
        return _TEXT
    digits = m.group("num")
    for sep in _GROUP:
        digits = digits.replace(sep, "")
    value: int | float = float(digits) if "." in digits else int(digits)
    negative = bool(m.group("open")) ^ (m.group("sign") in tuple(_MINUS)) ^ bool(m.group("sign2"))
    if negative:
        value = -value
    unit = "%" if (m.group("pct") or m.group("pct2")) else (m.group("cur") or m.group("cur2") or m.group("cents"))
    return Typed(NUMBER, value, unit, m.group("flag"))


def is_numeric_kind(kind: str) -> bool:
    """Numbers and placeholders fill data areas; text and years label headers."""
    return kind in (NUMBER, PLACEHOLDER)


def is_unit_label(text: str) -> bool:
    """A units annotation such as ``(in millions)``, ``$``, ``%``, ``percent`` or ``number``."""
    s = label_of(text)
    return bool(s) and len(s) <= 60 and bool(_UNIT_WORDS.match(s))


# A label that is *only* a unit of measure, as statistical agencies print under column headers
# ("percent", "number", "'000 kg", "'000 $ CAN", "kilotonnes", "thousand of acres", "%"). Stricter
# than ``_UNIT_WORDS``: "Number of employees" or "(in millions, except ...)" are not units-only.
_UNITS_ONLY = re.compile(
    r"^(?:'000\s*|''000\s*|thousands?\s+(?:of\s+)?|millions?\s+(?:of\s+)?|billions?\s+(?:of\s+)?)?"
    r"(?:(?:\$|dollars?|percent(?:age)?s?|per\s*cent|%|number|numbers|count|¢|cents?|grams?|g|mg|kg|kilograms?|"
    r"kilotonnes?|megatonnes?|tonnes?|metric\s+tonnes|acres?|hectares?|ha|kcal|calories|km|kilometres?|litres?|"
    r"rate|index|persons?|people|hours?|days?|years?)(?:\s*(?:CAN|CAD|US))?)?$", re.IGNORECASE)


def is_units_only(text: str) -> bool:
    """A label that names only a unit or scale: ``percent``, ``%``, ``'000 kg``, ``thousand of acres``."""
    s = label_of(text)
    return bool(s) and len(s) <= 40 and bool(_UNITS_ONLY.match(s)) and any(ch.isalpha() or ch in "$%¢'" for ch in s)


_PERCENT_RE = re.compile(r"%|\bper\s*cent(?:age)?s?\b|\bpercent(?:age)?s?\b", re.IGNORECASE)


def row_label_unit(label: str) -> str | None:
    """The unit a row label names itself: ``%`` for "% Difference" / "Percentage change", the label
    when it is only a unit ("number", "dollars"); None when it names none ("March", "Difference")."""
    s = label_of(label)
    if not s:
        return None
    if is_units_only(s):
        return "%" if _PERCENT_RE.search(s) else s
    return "%" if _PERCENT_RE.search(s) else None


def same_unit(a: str, b: str) -> bool:
    """Two unit labels name the same unit (``%`` = ``percent`` = ``percentage``; else case-folded equality)."""
    pa, pb = bool(_PERCENT_RE.search(a)), bool(_PERCENT_RE.search(b))
    if pa or pb:
        return pa and pb
    return label_of(a).lower() == label_of(b).lower()


_TOTAL_RE = re.compile(r"^(total|all|grand total|sum|overall)\b|\btotal$|^both sexes$", re.IGNORECASE)


@functools.lru_cache(maxsize=4096)
def is_total_label(label: str) -> bool:
    """``Total``, ``Total current assets``, ``All ages``, ``Grand total``, ``..., total``."""
    return bool(_TOTAL_RE.search(label.strip(" :,.")))
