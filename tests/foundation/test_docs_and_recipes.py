"""README's generated blocks are current; every recipe's smoke target runs; examples in --help run."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO


def test_readme_cli_reference_is_current():
    from mlx26.cli._reference import main

    assert main(["--check", str(REPO / "README.md")]) == 0, "README is stale: run `make docs`"


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
            # Examples that name a user's file cannot run here; the rest must.
            if line and not re.search(r"(^|\s)[\w/.-]+\.(csv|tsv|json|jsonl|txt|yaml|npz)\b", line):
                yield " ".join(path), line


@pytest.mark.parametrize(("command", "line"), list(_runnable_examples()))
def test_help_examples_run(command, line, subprocess_env, tmp_path):
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", line], capture_output=True, text=True,
                          env=subprocess_env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, f"{command}: `{line}` failed: {proc.stderr}"


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
