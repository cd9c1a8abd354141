"""Reading source files robustly for step scoring (SecCodePRM reconstruction, arXiv 2602.10418).

Not in the paper: the input handling a command-line scorer needs. Every odd input becomes a
:class:`Source` plus notices instead of a crash: non-UTF-8 bytes are decoded with
``surrogateescape`` (so they round-trip) and noticed; CRLF/CR line ends keep their line
numbers; empty and binary files are skipped with a notice; directories are walked for ``*.py``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mlx26.core.common.errors import InputError
from mlx26.core.score_code.segment import split_lines

BINARY_SNIFF = 8192


@dataclass
class Source:
    name: str
    text: str
    notices: list[str] = field(default_factory=list)
    skipped: bool = False

    @property
    def lines(self) -> list[str]:
        return split_lines(self.text)


def decode(raw: bytes, name: str) -> Source:
    """Bytes → Source: binary/empty are skipped, bad UTF-8 is kept with surrogateescape."""
    if not raw.strip():
        return Source(name, "", [f"{name}: empty file, skipped."], skipped=True)
    if b"\x00" in raw[:BINARY_SNIFF]:
        return Source(name, "", [f"{name}: binary file (NUL bytes), skipped."], skipped=True)
    notices = []
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8", "surrogateescape")
        notices.append(f"{name}: not valid UTF-8 ({exc.reason} at byte {exc.start}); undecodable bytes kept "
                       "as escapes.")
    return Source(name, text, notices)


def printable(text: str) -> str:
    """Text safe to write as UTF-8 (surrogate escapes become U+FFFD)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def iter_paths(paths: list[str], suffixes: tuple[str, ...] = (".py",)) -> Iterator[str]:
    """Files named, and the ``*.py`` files under directories named (sorted, hidden dirs skipped)."""
    for path in paths:
        p = Path(path)
        if p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
                for f in sorted(files):
                    if f.endswith(suffixes):
                        yield str(Path(root) / f)
        else:
            yield path


def read_path(path: str) -> Source:
    p = Path(path)
    if not p.exists():
        raise InputError(f"input file not found: {path}")
    return decode(p.read_bytes(), path)
