"""Token counting without downloads: labelled estimates, a safe upper bound, plain prompt rendering.

Our own heuristics (no paper reconstructed). Usage is taken, in this order of preference,
from the server's ``usage`` field (source ``server``), from the model's own tokenizer
(``local``), or from :func:`estimate_tokens` (``estimated``: about four UTF-8 bytes a token,
the usual rule of thumb for English with BPE vocabularies). No ``tiktoken`` encoding is
used, because those download their tables at run time.

The budget pre-check needs a bound, not an estimate: :func:`token_upper_bound` counts one
token per UTF-8 byte (byte-level BPE and SentencePiece-with-byte-fallback tokenizers never
need more) plus a chat-template allowance per message and per request.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence

BYTES_PER_TOKEN = 4
TEMPLATE_TOKENS_PER_MESSAGE = 8
TEMPLATE_TOKENS_PER_REQUEST = 64
_PIECE = re.compile(r"\s*\S+|\s+$")


def estimate_tokens(text: str) -> int:
    """A labelled estimate: ceil(UTF-8 bytes / 4); 0 for empty text."""
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN) if text else 0


def estimate_prompt_tokens(messages: Sequence[Mapping[str, str]]) -> int:
    """Estimate for a chat prompt: its contents plus 4 tokens of role markup per message."""
    return sum(estimate_tokens(m["content"]) + 4 for m in messages)


def token_upper_bound(texts: Iterable[str], messages: int = 1) -> int:
    """A bound on the prompt tokens of any byte-level tokenizer with a modest chat template."""
    return (sum(len(t.encode("utf-8")) for t in texts) + TEMPLATE_TOKENS_PER_MESSAGE * messages
            + TEMPLATE_TOKENS_PER_REQUEST)


def render_plain(messages: Sequence[Mapping[str, str]]) -> str:
    """Fallback prompt for tokenizers without a chat template: ``role: content`` lines + ``assistant:``."""
    return "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"


def pieces(text: str) -> Iterator[str]:
    """Split text into stream deltas (a word with its leading whitespace); they concatenate back to text."""
    pos = 0
    for match in _PIECE.finditer(text):
        yield text[pos:match.end()]
        pos = match.end()
    if pos < len(text):
        yield text[pos:]


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """Text up to the earliest stop sequence (excluded), and whether one was found."""
    hits = [i for i in (text.find(s) for s in stop) if i >= 0]
    if not hits:
        return text, False
    return text[:min(hits)], True


def truncate_estimated(text: str, max_tokens: int) -> tuple[str, bool]:
    """The longest prefix of whole pieces whose estimate fits ``max_tokens`` (at least one piece,
    cut by bytes if needed), and whether anything was cut."""
    if estimate_tokens(text) <= max_tokens:
        return text, False
    kept = ""
    for piece in pieces(text):
        if estimate_tokens(kept + piece) > max_tokens:
            break
        kept += piece
    if not kept:  # one long word: cut by bytes, on a character boundary
        raw = text.encode("utf-8")[:max_tokens * BYTES_PER_TOKEN]
        kept = raw.decode("utf-8", errors="ignore")
    return kept, True
