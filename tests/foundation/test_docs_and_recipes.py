"""The generated CLI reference and README table are current; README is a short entry point whose
quick start runs; every relative link in the docs resolves; recipes' smoke targets and --help
examples run."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mlx26.cli.main import self_contained

from tests.conftest import REPO

README_LIMIT = 12 * 1024  # bytes: the README is an entry point; the reference lives in docs/


def test_cli_reference_and_readme_table_are_current():
    from mlx26.cli._reference import main

    assert main(["--check", "--root", str(REPO)]) == 0, "docs/cli-reference.md or README is stale: run `make docs`"


def test_reference_check_fails_when_stale(tmp_path):
    from mlx26.cli._reference import REFERENCE, main

    (tmp_path / "docs").mkdir()
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    reference = (REPO / REFERENCE).read_text(encoding="utf-8")
    stale = reference.replace("Show this message and exit.", "Show this message.", 1)
    assert stale != reference
    (tmp_path / REFERENCE).write_text(stale, encoding="utf-8")
    assert main(["--check", "--root", str(tmp_path)]) == 1
    (tmp_path / REFERENCE).unlink()
    assert main(["--check", "--root", str(tmp_path)]) == 1  # a missing reference is stale too
    assert main(["--write", "--root", str(tmp_path)]) == 0
    assert "Show this message and exit." in (tmp_path / REFERENCE).read_text(encoding="utf-8")
    assert main(["--check", "--root", str(tmp_path)]) == 0
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    (tmp_path / "README.md").write_text(readme.replace("| `mlx26 zoo` |", "| `mlx26 zoo2` |", 1), encoding="utf-8")
    assert main(["--check", "--root", str(tmp_path)]) == 1  # a hand-edited command table is stale


def test_every_command_has_a_methods_row():
    from mlx26.cli._reference import unlisted, walk

    assert unlisted({" ".join(p) for p, _ in walk() if p}) == []
    assert unlisted({"brand-new"}) == ["brand-new"]


def test_readme_is_an_entry_point():
    size = (REPO / "README.md").stat().st_size
    assert size < README_LIMIT, f"README.md is {size} bytes; keep it under {README_LIMIT} (details go to docs/)"


def _quick_start_lines():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "README's Quick start has no ```bash block"
    return [line for line in block.group(1).splitlines() if line.strip() and not line.startswith("#")]


def test_readme_quick_start_has_a_pipe_across_commands():
    lines = _quick_start_lines()
    assert 5 <= len(lines) <= 9
    assert any(line.count("| mlx26 ") >= 1 and len(set(re.findall(r"mlx26 ([\w-]+)", line))) >= 2
               for line in lines)


@pytest.mark.parametrize("line", _quick_start_lines())
def test_readme_quick_start_runs(line, subprocess_env, tmp_path):
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", line], capture_output=True, text=True,
                          env=subprocess_env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, f"README quick start `{line}` failed: {proc.stderr}"
    assert proc.stdout.strip(), f"README quick start `{line}` printed nothing"


def _doc_files() -> list[Path]:
    return [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]


FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)


def _strip_code(text: str) -> str:
    """The text without fenced blocks and inline code (links and headings there are not real)."""
    return re.sub(r"`[^`\n]*`", "code", FENCE.sub("", text))


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown file: lowercase, punctuation dropped, '-' for spaces,
    '-1', '-2', … for repeats."""
    anchors, counts = set(), {}
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", FENCE.sub("", path.read_text(encoding="utf-8")), re.M):
        heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n = counts.get(slug, 0)
        counts[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def _relative_links(path: Path):
    for target in re.findall(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", _strip_code(path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        yield target


def test_doc_files_exist():
    for path in _doc_files():
        assert path.is_file(), f"{path.relative_to(REPO)} is missing"


@pytest.mark.parametrize("doc", [p.relative_to(REPO).as_posix() for p in _doc_files() if p.is_file()])
def test_relative_links_resolve(doc):
    path = REPO / doc
    broken = []
    for target in _relative_links(path):
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if REPO not in [dest, *dest.parents] or not dest.exists():
            broken.append(f"{target} (no such file in the repository)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target} (no heading #{anchor} in {dest.relative_to(REPO)})")
    assert not broken, f"{doc}: broken links: {broken}"


def _leaf_pages():
    from mlx26.cli._reference import subcommands, walk

    return [(path, text) for path, text in walk() if path and not subcommands(text)]


def test_every_command_has_examples():
    for path, text in _leaf_pages():
        assert "Examples:" in text, f"mlx26 {' '.join(path)} --help has no Examples block"


def _runnable_examples():
    for path, text in _leaf_pages():
        block = text.split("Examples:", 1)[1].split("\n\n", 1)[0]
        for line in block.splitlines():
            line = line.strip()
            # Examples that name a user's file, or glob a user's folders (runs/*), cannot run here; the rest must.
            if self_contained(line):
                yield " ".join(path), line


def _examples_by_command() -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for command, line in _runnable_examples():
        grouped.setdefault(command, []).append(line)
    return grouped


def _folder_state(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(f.relative_to(folder)): (f.stat().st_size, f.stat().st_mtime_ns) for f in folder.rglob("*") if f.is_file()}


@pytest.mark.parametrize(("command", "lines"), list(_examples_by_command().items()))
def test_help_examples_run_twice_in_one_folder(command, lines, subprocess_env, tmp_path):
    """A Makefile rule or a user re-runs an example where its outputs already are (issue 31): every
    example of a command passes in one empty folder, then again in the same folder.

    Only the examples that left something in the folder the first time run again: one that wrote
    nothing cannot meet its own output, and skipping it keeps the default suite's time in bounds."""
    subprocess_env.pop("MLX26_FORCE", None)  # the examples themselves must be re-runnable

    def run(line: str, attempt: str) -> None:
        proc = subprocess.run(["bash", "-o", "pipefail", "-c", line], capture_output=True, text=True,
                              env=subprocess_env, cwd=tmp_path, timeout=300)
        assert proc.returncode == 0, f"{command}: `{line}` failed on the {attempt} run: {proc.stderr}"

    writers = []
    for line in lines:
        before = _folder_state(tmp_path)
        run(line, "first")
        if _folder_state(tmp_path) != before:
            writers.append(line)
    for line in writers:
        run(line, "second")


def _smoke_targets():
    for mk in sorted((REPO / "recipes").glob("*.mk")):
        yield from re.findall(r"^(smoke-[\w-]+):", mk.read_text(), re.M)


@pytest.mark.skipif(shutil.which("make") is None, reason="make not installed")
@pytest.mark.parametrize("target", list(_smoke_targets()))
def test_recipe_smoke_targets(target, tmp_path, subprocess_env):
    proc = subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), target, f"OUT={tmp_path}",
         f"MLX26={sys.executable} -m mlx26.cli.main"],
        capture_output=True, text=True, env=subprocess_env, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_recipe_has_smoke_and_strict_shell():
    for mk in sorted((REPO / "recipes").glob("*.mk")):
        text = mk.read_text()
        assert text.startswith("#"), f"{mk.name} must open with a comment showing how to run it"
        assert "SHELL := bash" in text and ".SHELLFLAGS := -eu -o pipefail -c" in text, mk.name
        assert "SEED ?=" in text and re.search(r"^smoke-[\w-]+:", text, re.M), mk.name
