"""docs/environment.md lists every MLX26_* environment variable the code reads, and only those."""

from __future__ import annotations

import re

from tests.conftest import REPO

PAGE = REPO / "docs" / "environment.md"
SOURCES = ("cli", "core", "kernels", "fpga", "benchmarks")
VARIABLE = re.compile(r"\bMLX26_[A-Z0-9_]*[A-Z0-9]\b")
# C preprocessor names in fpga/hls (include guard, array bounds), not environment variables
NOT_ENVIRONMENT = {"MLX26_HLS_SHIM_H", "MLX26_MAX_DIM", "MLX26_MAX_TOPK", "MLX26_MAX_PAGE"}


def _in_code() -> dict[str, str]:
    found: dict[str, str] = {}
    for folder in SOURCES:
        for path in sorted((REPO / folder).rglob("*.py")):
            for name in VARIABLE.findall(path.read_text(encoding="utf-8")):
                found.setdefault(name, str(path.relative_to(REPO)))
    return found


def _on_page() -> set[str]:
    rows = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    return {name for row in rows for name in VARIABLE.findall(row.split("|")[1])}


def test_every_mlx26_variable_the_code_reads_is_documented():
    missing = {name: where for name, where in _in_code().items() if name not in _on_page() | NOT_ENVIRONMENT}
    assert not missing, f"add to docs/environment.md: {missing}"


def test_the_page_lists_no_variable_the_code_does_not_read():
    stale = _on_page() - set(_in_code())
    assert not stale, f"docs/environment.md lists variables no code reads: {sorted(stale)}"


def test_the_scan_finds_the_known_variables():
    code = _in_code()
    for name in ("MLX26_HOME", "MLX26_DEBUG", "MLX26_FORCE", "MLX26_THREADS", "MLX26_LLM", "MLX26_LLM_TIMEOUT"):
        assert name in code and name in _on_page()
