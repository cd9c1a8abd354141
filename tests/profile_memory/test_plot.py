"""`mlx26 profile-memory --plot`: bars of the stages' measured ms per decode step and share of the step."""

from __future__ import annotations

import json

import pytest

from tests._plot import assert_png

pytest.importorskip("torch")
pytest.importorskip("matplotlib")


def test_profile_memory_plot(run_cli, tmp_path):
    png = tmp_path / "p.png"
    r = run_cli("profile-memory", "--model", "tiny-llama", "--context", "256", "--decode-steps", "1", "--budget", "64",
                "-q", "--format", "jsonl", "--plot", png)
    assert r.code == 0, r.stderr
    assert_png(png, 2)
    from mlx26.core.profile_memory.figure import draw

    rows = [json.loads(line) for line in r.stdout.splitlines()]
    result = draw(rows, str(tmp_path / "again.png"))
    assert result["stages"] == ["prepare", "relevancy", "retrieval", "apply", "other"]


def test_profile_memory_plot_checked_first(run_cli, tmp_path):
    png = tmp_path / "p.png"
    png.write_bytes(b"old")
    r = run_cli("profile-memory", "--model", "tiny-llama", "--plot", png)
    assert r.code == 2 and "refusing to overwrite" in r.stderr and png.read_bytes() == b"old"
