"""`mlx26 quantize-moe --plot`: error vs extra memory per method (base alone, LQER, TileQ).

The fast tests stand canned projection records in for the quantization (the wiring and the methods read off the
records); the real tiny-moe run is marked slow."""

from __future__ import annotations

import pytest

from tests._plot import assert_png

pytest.importorskip("torch")
pytest.importorskip("matplotlib")


def _proj(layer, projection, lowrank="tileq"):
    rec = {"record": "projection", "layer": layer, "projection": projection, "base": "rtn", "lowrank": lowrank,
           "err_base": 0.19 - 0.01 * layer, "base_bytes": 86016, "rank": 4, "extra_bytes": 20480 + 1024 * layer,
           "err_lowrank": 0.14 - 0.01 * layer, "lqer_rank": 4, "lqer_bytes": 20480}
    if lowrank == "tileq":
        rec["err_lqer"] = 0.15 - 0.01 * layer
    return rec


CANNED = [_proj(0, "gate_up_proj"), _proj(0, "down_proj"), _proj(1, "gate_up_proj"), _proj(1, "down_proj"),
          {"record": "summary", "model": "tiny-moe", "total_extra_bytes": 86016}]


def test_methods_read_off_the_records():
    from mlx26.core.quantize_moe.figure import methods

    got = methods(CANNED)
    assert list(got) == ["rtn (no correction)", "rtn + LQER r4", "rtn + TileQ"]
    assert all(len(points) == 4 for points in got.values())
    assert got["rtn (no correction)"][0] == (0.0, 0.19) and got["rtn + LQER r4"][0] == (20.0, 0.15)
    lqer_run = methods([_proj(0, "down_proj", "lqer")])
    assert list(lqer_run) == ["rtn (no correction)", "rtn + LQER r4"]  # the run's own correction is LQER


def test_quantize_moe_plot(run_cli, tmp_path, monkeypatch):
    from mlx26.core.quantize_moe import run as qrun

    monkeypatch.setattr(qrun, "run", lambda *a, **k: [dict(r) for r in CANNED])
    png = tmp_path / "q.png"
    r = run_cli("quantize-moe", "--bits", "3", "--calib-bytes", "4096", "-q", "--format", "jsonl", "--plot", png)
    assert r.code == 0, r.stderr
    assert_png(png, 2)
    assert len(r.stdout.splitlines()) == len(CANNED)  # the records are emitted as before


def test_quantize_moe_plot_refusals(run_cli, tmp_path):
    r = run_cli("quantize-moe", "--plot", tmp_path / "q.jpg")
    assert r.code == 2 and ".png" in r.stderr
    done = tmp_path / "done"
    done.mkdir()
    (done / "quantize_moe.json").write_text("{}")
    r = run_cli("quantize-moe", "--model", done, "--plot", tmp_path / "q.png")
    assert r.code == 2 and "already quantized" in r.stderr


@pytest.mark.slow
def test_quantize_moe_plot_real_run(run_cli, tmp_path):
    png = tmp_path / "q.png"
    r = run_cli("quantize-moe", "--bits", "3", "--match-memory", "lqer:4", "--calib-bytes", "4096", "-q",
                "--format", "jsonl", "--plot", png)
    assert r.code == 0, r.stderr
    assert_png(png, 2)
