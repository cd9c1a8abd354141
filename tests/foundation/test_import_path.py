"""The checkout root never shadows installed packages (the repo's kernels/ vs PyPI's `kernels`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mlx26.core._import_path import demote_checkout_root

REPO = Path(__file__).resolve().parents[2]


def test_checkout_root_moves_behind_other_entries(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "path", [str(REPO), str(tmp_path), "/x/site-packages"])
    assert demote_checkout_root() == [str(REPO)]
    assert sys.path == [str(tmp_path), "/x/site-packages", str(REPO)]


def test_python_m_from_the_repo_root_imports_the_installed_kernels_package():
    # what `make smoke-…` does: python -m from the repository root, then a library imports `kernels`
    code = ("import mlx26.cli.main, importlib.util; s = importlib.util.find_spec('kernels'); "
            "print(s.origin if s else None)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert not out.stdout.strip().startswith(str(REPO / "kernels"))
