"""Classification tasks for ``mlx26 spike``: GLUE TSVs a user supplies, and substitutes built from text we have.

GLUE cannot be downloaded here, so the loaders read the files a user has, in the formats the GLUE
distribution ships (tab-separated, header row, no quoting — the way GLUE's own readers use
``csv.reader(quotechar=None)``):

* ``sst2``: ``sentence  label`` (0/1);  ``mrpc``: ``Quality  #1 ID  #2 ID  #1 String  #2 String``;
* ``rte``:  ``index  sentence1  sentence2  label`` (entailment / not_entailment);
* ``qnli``: ``index  question  sentence  label`` (entailment / not_entailment).

Substitutes, built from the zoo corpora (our own task definitions, not GLUE; train from the corpora's
``train`` split, test from ``heldout``):

* ``source`` — which corpus a line comes from: stdlib code (docstring lines removed), stdlib prose
  (docstrings and pydoc topics) or arithmetic word problems (3 classes, balanced), an SST-2-like
  single-sentence task on REAL text;
* ``pair`` — do two lines come from the same source (code / prose / arithmetic; an MRPC-like pair task on
  REAL text);
* ``salient`` — LABELLED SYNTHETIC: a sequence of (level, value) tokens; the label is the value of the
  token with the highest level, among 16 levels. The top level varies and half the distractors sit one level
  below it, so the answer needs a comparison across the whole sequence. Sixteen levels, not the six of the
  first version, because softmax-free attention solved six (every attention was ≥ 0.997: a sum can single
  out the top of a few levels — by weights growing fast enough with the level, or by each token counting the
  levels above its own); with 16 it cannot at this width, and the task separates the attentions
  (docs/spike.md).
* ``salient-query`` — LABELLED SYNTHETIC: (colour, level, value) tokens and one query token carrying a
  colour; the label is the value of the highest-level token *of the query's colour* (tokens of the other
  colour may rank higher), so the winner depends on a token elsewhere in the sequence. Softmax-free
  attention solves this one as well (a head can broadcast the query's colour); it separates Spike2Max's
  two normalisations (docs/spike.md).

Sequences are token ids of the shipped ``bpe-4096`` tokenizer (pairs joined by its ``<|eos|>``), truncated to
``max_len`` longest segment first (the count of truncated sequences is reported).
"""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass, field
from pathlib import Path

import torch
from mlx26.core.common.errors import InputError, unknown_name
from mlx26.core.spike.spec import BUILTIN_TASKS, GLUE_TASKS, TASKS

SALIENT_LEVELS, SALIENT_VALUES, SALIENT_LEN = 16, 4, (16, 32)
QUERY_COLOURS, QUERY_LEVELS, QUERY_VALUES, QUERY_LEN = 2, 4, 4, (8, 16)
GLUE_FORMATS = {
    # task: (text columns, label column, label names in class order)
    "sst2": (("sentence",), "label", ("0", "1")),
    "mrpc": (("#1 String", "#2 String"), "Quality", ("0", "1")),
    "rte": (("sentence1", "sentence2"), "label", ("not_entailment", "entailment")),
    "qnli": (("question", "sentence"), "label", ("not_entailment", "entailment")),
}
SOURCE_CLASSES = ("code", "prose", "arithmetic")


@dataclass
class Dataset:
    ids: torch.Tensor  # (M, N) int64, padded with pad_id
    labels: torch.Tensor  # (M,) int64
    label_names: tuple[str, ...]
    vocab: int
    synthetic: bool
    source: str
    truncated: int = 0
    pad_id: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def mask(self) -> torch.Tensor:
        return self.ids != self.pad_id

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def subset(self, idx) -> Dataset:
        return Dataset(self.ids[idx], self.labels[idx], self.label_names, self.vocab, self.synthetic, self.source,
                       0, self.pad_id, self.extra)


def check_task(task: str) -> str:
    if task not in TASKS:
        raise unknown_name("task", task, TASKS)
    return task


# --------------------------------------------------------------------------- salient (synthetic)

def salient(n: int, seed: int, min_len: int = SALIENT_LEN[0], max_len: int = SALIENT_LEN[1]) -> Dataset:
    """``n`` SYNTHETIC sequences; token id = 1 + level·V + value (0 = padding)."""
    rng = random.Random(seed)
    rows, labels = [], []
    for _ in range(n):
        length = rng.randint(min_len, max_len)
        top = rng.randint(2, SALIENT_LEVELS - 1)
        # Half the distractors sit one level below the winner: a weighted sum cannot single it out, a
        # normalised exponential readout can.
        levels = [top - 1 if rng.random() < 0.5 else rng.randrange(top - 1) for _ in range(length)]
        winner = rng.randrange(length)
        levels[winner] = top
        values = [rng.randrange(SALIENT_VALUES) for _ in range(length)]
        rows.append([1 + lv * SALIENT_VALUES + v for lv, v in zip(levels, values, strict=True)])
        labels.append(values[winner])
    return _pack(rows, labels, tuple(str(v) for v in range(SALIENT_VALUES)), 1 + SALIENT_LEVELS * SALIENT_VALUES,
                 max_len, synthetic=True, source=f"salient (SYNTHETIC, seed {seed})")


def salient_query(n: int, seed: int, min_len: int = QUERY_LEN[0], max_len: int = QUERY_LEN[1]) -> Dataset:
    """``n`` SYNTHETIC sequences of ``min_len``…``max_len`` tokens plus one query token: token id =
    1 + (colour·L + level)·V + value, query id = 1 + C·L·V + colour (0 = padding)."""
    C, L, V = QUERY_COLOURS, QUERY_LEVELS, QUERY_VALUES
    rng = random.Random(seed)
    rows, labels = [], []
    for _ in range(n):
        length = rng.randint(min_len, max_len)
        colours = [rng.randrange(C) for _ in range(length)]
        query = rng.randrange(C)
        mine = [i for i in range(length) if colours[i] == query]
        if not mine:
            colours[0] = query
            mine = [0]
        levels = [rng.randrange(L) for _ in range(length)]
        top = rng.randint(1, L - 1)
        for i in mine:  # half the query-coloured distractors sit one level below the winner
            levels[i] = top - 1 if rng.random() < 0.5 else rng.randrange(top)
        winner = rng.choice(mine)
        levels[winner] = top
        values = [rng.randrange(V) for _ in range(length)]
        row = [1 + (c * L + lv) * V + v for c, lv, v in zip(colours, levels, values, strict=True)]
        row.insert(rng.randrange(length + 1), 1 + C * L * V + query)
        rows.append(row)
        labels.append(values[winner])
    return _pack(rows, labels, tuple(str(v) for v in range(V)), 1 + C * L * V + C, max_len + 1, synthetic=True,
                 source=f"salient-query (SYNTHETIC, seed {seed})")


# --------------------------------------------------------------------------- text tasks

def _tokenizer():
    from mlx26.core.zoo.tokenization import shipped_bpe

    return shipped_bpe()


def _encode(tok, texts: list[tuple[str, ...]], max_len: int) -> tuple[list[list[int]], list[bool]]:
    """Token ids, segments joined by ``<|eos|>``; a pair over ``max_len`` loses tokens from the end of its
    longer segment first (longest-first, as GLUE tooling truncates). Returns the rows and which were cut."""
    from mlx26.core.zoo.tokenization import encode_many

    sep = tok.eos_token_id
    parts = [encode_many(tok, [t[i] for t in texts]) for i in range(len(texts[0]))] if texts else []
    out, cut = [], []
    for j in range(len(texts)):
        segs = [p[j] for p in parts]
        budget = max_len - (len(segs) - 1)
        cut.append(sum(map(len, segs)) > budget)
        if cut[-1]:
            while sum(map(len, segs)) > max(budget, len(segs)):
                k = max(range(len(segs)), key=lambda i: len(segs[i]))
                segs[k] = segs[k][:-1]
        ids: list[int] = []
        for i, seg in enumerate(segs):
            if i:
                ids.append(sep)
            ids.extend(seg)
        out.append(ids or [sep])
    return out, cut


def _lines(text: str, lo: int = 20, hi: int = 200) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if lo <= len(ln.strip()) <= hi]


def _source_lines(split: str, n: int, seed: int) -> tuple[list[tuple[str, ...]], list[int]]:
    """``n`` lines, as balanced as ``n`` allows (the first classes get the remainder)."""
    from mlx26.core.zoo.corpora import corpus, docstrings

    rng = random.Random(seed)
    per_class = -(-n // 3)
    pools: list[list[str]] = [[], [], []]
    for doc in corpus("stdlib-code").documents(split):
        prose = {ln.strip() for d in docstrings(doc.text) for ln in d.splitlines()}
        pools[0].extend(ln for ln in _lines(doc.text) if ln not in prose and not ln.startswith(('"""', "'''", "#")))
        if len(pools[0]) > 20 * per_class:
            break
    for doc in corpus("stdlib-prose").documents(split):
        pools[1].extend(_lines(doc.text))
        if len(pools[1]) > 20 * per_class:
            break
    for doc in corpus("arithmetic").documents(split):
        pools[2].extend(_lines(doc.text, lo=12))
        if len(pools[2]) > 20 * per_class:
            break
    texts: list[tuple[str, ...]] = []
    labels: list[int] = []
    for c, pool in enumerate(pools):
        pool = sorted(set(pool))
        k = n // 3 + (c < n % 3)
        if len(pool) < k:
            raise InputError(f"the {SOURCE_CLASSES[c]} corpus has only {len(pool)} usable lines in its {split} split",
                             "ask for fewer examples")
        texts.extend((t,) for t in rng.sample(pool, k))
        labels.extend([c] * k)
    order = list(range(len(texts)))
    rng.shuffle(order)
    return [texts[i] for i in order], [labels[i] for i in order]


def _pair_lines(split: str, n: int, seed: int) -> tuple[list[tuple[str, str]], list[int]]:
    """Pairs of lines, half from the same source (code / prose / arithmetic), half from two different ones."""
    rng = random.Random(seed)
    texts, labels = _source_lines(split, n, seed + 7)
    by_class: list[list[str]] = [[t[0] for t, y in zip(texts, labels, strict=True) if y == c] for c in range(3)]
    pairs, same = [], []
    for i in range(n):
        a = rng.randrange(3)
        b = a if i % 2 == 0 else (a + 1 + rng.randrange(2)) % 3
        pairs.append((rng.choice(by_class[a]), rng.choice(by_class[b])))
        same.append(int(a == b))
    return pairs, same


def builtin(task: str, split: str, n: int, seed: int, max_len: int = 64) -> Dataset:
    """A substitute task's ``split`` (train / heldout) with about ``n`` examples."""
    if task == "salient":
        # Held-out sequences come from another seed stream (seed + 1000003).
        return salient(n, seed if split == "train" else seed + 1_000_003,
                       min_len=min(SALIENT_LEN[0], max_len), max_len=min(SALIENT_LEN[1], max_len))
    if task == "salient-query":
        return salient_query(n, seed if split == "train" else seed + 1_000_003,
                             min_len=min(QUERY_LEN[0], max_len - 1), max_len=min(QUERY_LEN[1], max_len - 1))
    tok = _tokenizer()
    if task == "source":
        texts, labels = _source_lines(split, n, seed)
        names: tuple[str, ...] = SOURCE_CLASSES
        src = f"source: stdlib code / stdlib prose / arithmetic lines, {split} split (REAL text)"
    elif task == "pair":
        texts, labels = _pair_lines(split, n, seed)  # type: ignore[assignment]
        names = ("different", "same")
        src = f"pair: same-source line pairs (code / prose / arithmetic), {split} split (REAL text)"
    else:
        raise unknown_name("built-in task", task, BUILTIN_TASKS)
    rows, cut = _encode(tok, texts, max_len)
    return _pack(rows, labels, names, len(tok), max_len, synthetic=False, source=src, pad_id=tok.pad_token_id,
                 cut=cut)


def _pack(rows: list[list[int]], labels: list[int], names: tuple[str, ...], vocab: int, max_len: int, *,
          synthetic: bool, source: str, pad_id: int = 0, cut: list[bool] | None = None) -> Dataset:
    if not rows:
        raise InputError(f"{source}: no examples")
    truncated = sum(len(r) > max_len or bool(cut and cut[i]) for i, r in enumerate(rows))
    n = min(max_len, max(len(r) for r in rows))
    ids = torch.full((len(rows), n), pad_id, dtype=torch.int64)
    for i, r in enumerate(rows):
        r = r[:n]
        ids[i, : len(r)] = torch.tensor(r, dtype=torch.int64)
    return Dataset(ids, torch.tensor(labels, dtype=torch.int64), names, vocab, synthetic, source, truncated, pad_id)


# --------------------------------------------------------------------------- GLUE TSVs

def read_glue(task: str, path: str) -> tuple[list[tuple[str, ...]], list[int]]:
    """Texts and label indices of a GLUE TSV; a malformed line or an unknown label names its line."""
    if task not in GLUE_FORMATS:
        raise unknown_name("GLUE task", task, GLUE_TASKS)
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{path} is a folder, not a {task} TSV")
    if not p.is_file():
        raise InputError(f"{path}: no such file")
    try:
        with p.open(encoding="utf-8-sig", newline="") as f:
            return _read_glue_rows(csv.reader(f, delimiter="\t", quotechar=None), task, path)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text (byte {exc.start}); GLUE files are UTF-8 TSV") from None
    except csv.Error as exc:
        raise InputError(f"{path}: malformed TSV ({exc})") from None


def _read_glue_rows(reader, task: str, path: str) -> tuple[list[tuple[str, ...]], list[int]]:
    cols, label_col, names = GLUE_FORMATS[task]
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(f"{path}: empty file (expected a {task} TSV with a header row)") from None
    missing = [c for c in (*cols, label_col) if c not in header]
    if missing:
        raise InputError(f"{path}:1: the header lacks {', '.join(repr(c) for c in missing)} for --task {task}",
                         f"{task} files have the columns {', '.join((*cols, label_col))} (tab-separated)")
    where = [header.index(c) for c in cols]
    at = header.index(label_col)
    texts, labels = [], []
    for row in reader:
        line = reader.line_num
        if not row or row == [""]:
            continue
        if len(row) != len(header):
            raise InputError(f"{path}:{line}: expected {len(header)} tab-separated fields, got {len(row)}")
        label = row[at].strip()
        if label not in names:
            raise InputError(f"{path}:{line}: unknown label {label!r} for {task}",
                             f"{task} labels are {', '.join(names)}")
        texts.append(tuple(row[i] for i in where))
        labels.append(names.index(label))
    if not texts:
        raise InputError(f"{path}: no examples after the header")
    return texts, labels


def glue(task: str, path: str, max_len: int = 64) -> Dataset:
    texts, labels = read_glue(task, path)
    tok = _tokenizer()
    rows, cut = _encode(tok, texts, max_len)
    return _pack(rows, labels, GLUE_FORMATS[task][2], len(tok), max_len, synthetic=False,
                 source=f"{task} TSV {path}", pad_id=tok.pad_token_id, cut=cut)


def load(task: str, split: str, *, data: str | None, n: int, seed: int, max_len: int) -> Dataset:
    """A task's data: GLUE tasks read ``data`` (a TSV), built-in ones generate ``n`` examples."""
    check_task(task)
    if task in GLUE_TASKS:
        if data is None:
            raise InputError(f"--task {task} reads a GLUE TSV", f"pass --train/--test FILE.tsv ({task} format)")
        return glue(task, data, max_len)
    if data is not None:
        raise InputError(f"--task {task} is built in and reads no file", "drop the TSV, or pick a GLUE --task")
    return builtin(task, split, n, seed, max_len)
