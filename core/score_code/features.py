"""Hashed token n-gram features of a step and its causal context (SecCodePRM reconstruction).

The paper's PRM is a code LLM with a token-classification head; our fast model replaces it
with a linear model over hashed features, all computed from the prefix up to the step
(reconstruction, not in the paper):

* ``s:`` unigrams and bigrams of the step's tokens;
* ``c:`` the set of tokens seen in the previous ``window`` steps (presence, max-pooled);
* ``x:`` conjunctions of each call name in the step with each call name in the context, so
  a sink can be judged by what ran before it (a sanitiser, an alias, a tainted source);
* ``t:`` (``taint=True``) the taint-like features of :mod:`taint` — a sink reached by the
  enclosing function's inputs, a string built from them, an SQL call without parameters — and
  their conjunctions with the step's call names.

``scope="function"`` limits the context to the enclosing function: a step that opens a
``def``/``class`` at the indentation of the previous one (or shallower) starts afresh, so code
prepended in other functions cannot change a function's scores. ``scope="window"`` (the
previous models) keeps the last ``window`` steps whatever function they were in.

Tokens come from one regex over the raw text (string contents included: SQL keywords inside
literals matter). Hashes are CRC32, so features are identical across processes and machines.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Sequence

from mlx26.core.common.errors import InputError
from mlx26.core.score_code.taint import ScopeTracker, TaintState

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|[^\sA-Za-z0-9_]")
CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\(")
DEFAULT_DIM = 1 << 18
DEFAULT_WINDOW = 256
SCOPES = ("window", "function")
LAYOUTS = ("mixed", "split")
# ``split`` layout: each namespace hashes into its own slice of [0, dim) (offset, size as fractions
# of dim), so the few taint features never share a weight with the hundreds of thousands of
# n-grams, and each namespace can be regularised on its own (``region_of``).
REGIONS = {"step": (0, 1 / 2), "context": (1 / 2, 1 / 8), "calls": (5 / 8, 1 / 4), "taint": (7 / 8, 1 / 8)}

_HASH_CACHE: dict[str, int] = {}


def _h(text: str) -> int:
    value = _HASH_CACHE.get(text)
    if value is None:
        value = zlib.crc32(text.encode("utf-8", "surrogateescape"))
        if len(_HASH_CACHE) < 500_000:
            _HASH_CACHE[text] = value
    return value


_LEXEMES = re.compile(
    r"""(?P<tq>[rRbBuUfF]{0,2}(?:\"\"\"[\s\S]*?(?:\"\"\"|\Z)|'''[\s\S]*?(?:'''|\Z)))"""
    r"""|(?P<sq>[rRbBuUfF]{0,2}(?:"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?))"""
    r"|(?P<comment>#[^\n]*)")


class CodeOnly:
    """Comments and docstrings removed from consecutive steps (a docstring may span steps).

    Prose says nothing about what code does, and its n-grams are what a small model memorises
    from a few hundred training functions (a docstring mentioning "absolute path" flagged stdlib
    files as path traversal). String literals inside expressions stay: SQL inside them matters.
    A triple-quoted string that starts a line is taken for a docstring. Newlines are kept.
    """

    def __init__(self) -> None:
        self.open_quote: str | None = None  # a docstring left open by the previous step

    def __call__(self, text: str) -> str:
        if self.open_quote is not None:
            end = text.find(self.open_quote)
            if end < 0:
                return "\n" * text.count("\n")
            text = "\n" * text.count("\n", 0, end) + text[end + 3:]
            self.open_quote = None
        return _LEXEMES.sub(self._replace, text)

    def _replace(self, m: re.Match) -> str:
        if m.group("comment") is not None:
            return ""
        body = m.group("tq")
        if body is None:
            return m.group(0)
        text = m.string
        if text[text.rfind("\n", 0, m.start()) + 1:m.start()].strip():
            return body  # a triple-quoted literal inside an expression: code, kept
        quote = body.lstrip("rRbBuUfF")[:3]
        if len(body.lstrip("rRbBuUfF")) < 6 or not body.endswith(quote):
            self.open_quote = quote  # unterminated in this step: the docstring goes on in the next
        return "\n" * body.count("\n")


def region_ends(dim: int) -> list[int]:
    """The exclusive upper index of each namespace of the ``split`` layout, in :data:`REGIONS` order."""
    return [int(dim * (offset + size)) for offset, size in REGIONS.values()]


def region_of(index: int, dim: int) -> str:
    """The namespace an index of the ``split`` layout belongs to."""
    return next(name for name, end in zip(REGIONS, region_ends(dim), strict=True) if index < end)


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def calls(text: str) -> list[str]:
    """Dotted call names in the step, e.g. ``os.system`` and ``system`` for ``os.system(``."""
    out: list[str] = []
    for name in CALL.findall(text):
        out.append(name)
        if "." in name:
            out.append(name.rsplit(".", 1)[1])
    return out


class StepFeaturizer:
    """Feature indices for steps given in order; only earlier steps enter the context (causal).

    ``__call__`` returns a step's feature row (indices; an index may repeat across the three
    namespaces, and repeats add up). ``dot`` gives the same row's dot product with a weight
    vector without building it: the context part is a running sum updated as tokens enter and
    leave the window, so scoring costs O(step length), not O(context size).
    ``delta`` gives the same information as index lists for a runtime that holds the weights
    itself (onnxruntime, torch): the step's own indices and the context features that entered
    or left since the previous step, so the caller keeps the context sum as a running total.
    """

    def __init__(self, dim: int = DEFAULT_DIM, window: int = DEFAULT_WINDOW, *, scope: str = "window",
                 taint: bool = False, layout: str = "mixed"):
        if dim < 2 or dim & (dim - 1):
            raise InputError(f"feature dimension must be a power of two, got {dim}.")
        if scope not in SCOPES:
            raise InputError(f"unknown context scope '{scope}'", "choose one of: " + ", ".join(SCOPES))
        if layout not in LAYOUTS:
            raise InputError(f"unknown feature layout '{layout}'", "choose one of: " + ", ".join(LAYOUTS))
        if layout == "split" and dim < 64:
            raise InputError(f"the split feature layout needs dim >= 64, got {dim}.")
        self.layout = layout
        self.code_only = CodeOnly() if layout == "split" else None
        # (offset, mask) per namespace; in the mixed layout every namespace spans the whole space.
        self._slots = {name: (int(dim * off), int(dim * size) - 1) if layout == "split" else (0, dim - 1)
                       for name, (off, size) in REGIONS.items()}
        self.scope = scope
        self.taint = TaintState(origin=layout == "split") if taint else None
        self._scopes = ScopeTracker()
        self.dim = dim
        self.mask = dim - 1
        self.window = window
        self._recent: deque[tuple[set[int], set[int]]] = deque()
        self._context: Counter[int] = Counter()  # context feature index -> steps in the window holding it
        self._context_calls: Counter[int] = Counter()
        self._ctx_sum = 0.0
        self._weights = None
        self.truncated = False
        self._track = False  # record context changes for delta()
        self._entered: list[int] = []
        self._left: list[int] = []

    def _new_scope(self, text: str) -> None:
        """Start a fresh context when the step opens a function at the previous one's depth or shallower."""
        first = self._scopes.def_indent is None
        fresh = self._scopes.starts_scope(text)
        if fresh and self.scope == "function":
            self._clear()
        opened_first = first and self._scopes.def_indent is not None  # the file's first def: taint starts there
        if self.taint is not None and (fresh or opened_first):
            self.taint.reset()

    def _clear(self) -> None:
        if self._track:  # a fresh scope: every context feature leaves (amortised: each entered once)
            pending = set(self._entered)  # entered since the caller's last update: never in its running set
            self._left += [f for f in self._context if f not in pending]
            self._entered = []
        self._recent.clear()
        self._context.clear()
        self._context_calls.clear()
        self._ctx_sum = 0.0

    def _parts(self, text: str) -> tuple[set[int], set[int], set[int]]:
        if self.scope == "function" or self.taint is not None:
            self._new_scope(text)
        if self.code_only is not None:
            text = self.code_only(text)
        (so, sm), (co, cm), (xo, xm), (to, tm) = self._slots.values()
        cache = _HASH_CACHE
        hs = [cache[t] if t in cache else _h(t) for t in TOKEN.findall(text)]
        step = {so + ((h * 3 + 1) & sm) for h in hs}
        step.update(so + ((((a * 1_000_003) ^ b) * 3) & sm) for a, b in zip(hs, hs[1:], strict=False))
        ctx_new = {co + ((h * 3 + 2) & cm) for h in hs}
        call_hashes = {_h(c) for c in calls(text)}
        conj = {xo + (((((a * 2_654_435_761) ^ b) * 7) + 5) & xm) for a in call_hashes for b in self._context_calls}
        if self.taint is not None:
            for name in self.taint.step(text):
                t = _h("t:" + name)
                conj.add(to + (((t * 11) + 3) & tm))
                conj.update(to + (((((t * 2_654_435_761) ^ c) * 13) + 9) & tm) for c in call_hashes)
        return step | conj | {0}, ctx_new, call_hashes

    def __call__(self, text: str) -> list[int]:
        own, ctx_new, call_hashes = self._parts(text)
        row = sorted(own) + sorted(self._context)
        self._push(ctx_new, call_hashes)
        return row

    def dot(self, text: str, weights) -> float:
        """``weights @ row`` for this step's row, then advance the context (same as ``__call__``)."""
        if self._weights is not weights:
            if self._recent:
                raise InputError("dot() must use one weight vector from the first step on.")
            self._weights = weights
        own, ctx_new, call_hashes = self._parts(text)
        value = float(sum(map(weights.__getitem__, own))) + self._ctx_sum
        self._push(ctx_new, call_hashes)
        return value

    def delta(self, text: str) -> tuple[list[int], list[int], list[int]]:
        """(own indices, context features entered, context features left) for this step.

        The step's full row is ``own + context`` where ``context`` is the running set after
        applying every earlier step's entered/left lists in order (``sum(w[own]) + running`` equals
        ``dot``). Then the context advances, as in ``__call__``.
        """
        self._track = True
        own, ctx_new, call_hashes = self._parts(text)
        entered, left = self._entered, self._left
        self._entered, self._left = [], []
        self._push(ctx_new, call_hashes)
        return sorted(own), entered, left

    def _push(self, ctx_new: set[int], call_hashes: set[int]) -> None:
        self._recent.append((ctx_new, call_hashes))
        self._enter(ctx_new)
        self._context_calls.update(call_hashes)
        if len(self._recent) > self.window:
            old, old_calls = self._recent.popleft()
            self._leave(old)
            for c in old_calls:
                self._context_calls[c] -= 1
                if not self._context_calls[c]:
                    del self._context_calls[c]
            self.truncated = True

    def _enter(self, feats: set[int]) -> None:
        w = self._weights
        for f in feats:
            if not self._context[f]:
                if w is not None:
                    self._ctx_sum += float(w[f])
                if self._track:
                    self._entered.append(f)
            self._context[f] += 1

    def _leave(self, feats: set[int]) -> None:
        w = self._weights
        for f in feats:
            self._context[f] -= 1
            if not self._context[f]:
                del self._context[f]
                if w is not None:
                    self._ctx_sum -= float(w[f])
                if self._track:
                    self._left.append(f)


def featurize(texts: Iterable[str], dim: int = DEFAULT_DIM, window: int = DEFAULT_WINDOW, *, scope: str = "window",
              taint: bool = False, layout: str = "mixed") -> Iterator[list[int]]:
    fz = StepFeaturizer(dim, window, scope=scope, taint=taint, layout=layout)
    for text in texts:
        yield fz(text)


def csr(rows: Sequence[Sequence[int]], dim: int):
    """A scipy CSR matrix of binary features."""
    import numpy as np
    from scipy import sparse

    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r) for r in rows])
    indices = np.fromiter((i for r in rows for i in r), dtype=np.int32, count=int(indptr[-1]))
    data = np.ones(len(indices), dtype=np.float32)
    return sparse.csr_matrix((data, indices, indptr), shape=(len(rows), dim))
