"""The shared ``--plot FILE.png`` (core/common/plot.py, cli/_plot.py): the figures, what learning_curves picks,
and the error paths every command shares (exit 2 for a bad or existing path, exit 3 without matplotlib).
``mlx26 dp-mix compare --plot`` is the cheap command the CLI paths are checked on."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from tests._plot import assert_png

pytest.importorskip("matplotlib")


RECORDS = [
    {"step": 0, "phase": "train", "loss": 2.0, "note": "start", "flag": True, "seed": 3, "lr": 1e-3},
    {"step": 1, "phase": "train", "loss": 1.5, "note": "a", "flag": False, "seed": 3, "lr": 1e-3, "acc": None},
    {"step": 2, "phase": "eval", "acc": 0.5, "seed": 3, "lr": 1e-3, "bad": float("nan")},
    {"step": 3, "phase": "train", "loss": 1.1, "note": "b", "seed": 3, "lr": 1e-3, "acc": 0.75, "bad": 1.0},
    {"phase": "summary", "loss": 99.0},  # no step: left out
]


def test_learning_curves_pick_the_varying_numeric_fields(tmp_path):
    from mlx26.core.common.plot import curve_fields, learning_curves

    # strings, bools, constants (seed, lr), a field with one finite value (bad) and the x key are skipped
    assert curve_fields(RECORDS[:4]) == ["loss", "acc"]
    result = learning_curves(RECORDS, tmp_path / "c.png", series="phase", title="t")
    assert result["fields"] == ["loss", "acc"] and result["panels"] == 2
    assert result["points"] == 3 + 2  # loss at steps 0, 1, 3 (the step-less summary is left out); acc at 2, 3
    assert (result["width"], result["height"]) == (960, 340)
    assert_png(tmp_path / "c.png", 2)


def test_learning_curves_at_most_six_panels_losses_first(tmp_path):
    from mlx26.core.common.plot import MAX_PANELS, learning_curves

    records = [{"step": s, **{f"m{i}": s * (i + 1) for i in range(9)}, "train_loss": 1 / (s + 1), "seconds": s}
               for s in range(4)]
    result = learning_curves(records, tmp_path / "c.png")
    assert len(result["fields"]) == MAX_PANELS and result["fields"][0] == "train_loss"
    assert "seconds" not in result["fields"]  # timings rank after the metrics
    assert_png(tmp_path / "c.png", MAX_PANELS)


def test_learning_curves_without_a_step_use_the_position(tmp_path):
    from mlx26.core.common.plot import learning_curves

    result = learning_curves([{"loss": v} for v in (3.0, 2.0, 1.0)], tmp_path / "c.png")
    assert result["fields"] == ["loss"] and result["points"] == 3


def test_learning_curves_with_nothing_varying_still_write_a_figure(tmp_path):
    from mlx26.core.common.plot import learning_curves

    result = learning_curves([{"step": 1, "loss": 1.0}], tmp_path / "c.png")
    assert result["fields"] == [] and (tmp_path / "c.png").stat().st_size > 0


def test_bars_and_lines_have_the_promised_size(tmp_path):
    from mlx26.core.common.plot import BarPanel, Panel, Series, save_bars, save_lines

    bars = [BarPanel("b", ["prepare", "apply"], {"quest": [1.0, 2.0], "rag": [0.5, 3.0]}, ylabel="ms")] * 2
    assert save_bars(tmp_path / "b.png", bars)["width"] == 960
    assert_png(tmp_path / "b.png", 2)
    x = [i / 10 for i in range(50)]
    lines = [Panel("sin", [Series("sin", x, [math.sin(v) for v in x])], logy=False)] * 4
    assert save_lines(tmp_path / "l.png", lines, title="four")["height"] == 680
    assert_png(tmp_path / "l.png", 4)


def test_paths_are_checked(tmp_path):
    from mlx26.core.common.errors import InputError
    from mlx26.core.common.plot import check_png, save_lines

    with pytest.raises(InputError, match="does not end in .png"):
        check_png(tmp_path / "x.jpg")
    existing = tmp_path / "x.PNG"
    existing.write_bytes(b"old")
    with pytest.raises(InputError, match="refusing to overwrite"):
        save_lines(existing, [])
    assert existing.read_bytes() == b"old"
    check_png(existing, force=True)
    with pytest.raises(InputError, match="folder does not exist"):
        check_png(tmp_path / "no" / "x.png")


def test_importing_the_module_does_not_load_matplotlib():
    code = "import sys, mlx26.core.common.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------- through the CLI (dp-mix compare)

COMPARE = ("dp-mix", "compare", "-e", "4", "-d", "1e-5", "-q", "--format", "json")


def test_dp_mix_compare_plot(run_cli, tmp_path):
    png = tmp_path / "c.png"
    r = run_cli(*COMPARE, "--plot", png)
    assert r.code == 0, r.stderr
    assert_png(png, 3)
    # a single ε: the cost curve is computed on ε/4 … 16ε
    from mlx26.core.dp_mix.figure import cost_rows

    delta, rows, gridded = cost_rows([(4.0, 1e-5)], [], 1.0)
    assert gridded and delta == 1e-5 and sorted({r["eps"] for r in rows}) == [1, 2, 4, 8, 16, 32, 64]


def test_dp_mix_densities_integrate_to_one():
    import numpy as np
    from mlx26.core import dp_mix
    from mlx26.core.dp_mix.figure import density

    x = np.linspace(-60, 60, 600_001)
    for row in dp_mix.compare(1.0, 1e-5):
        mass = np.trapezoid(density(row, 1.0, 1e-5, 1.0, x), x)
        assert mass == pytest.approx(1.0, abs=2e-3), row["mechanism"]


def test_dp_mix_compare_plot_uses_the_compared_eps(run_cli, tmp_path):
    from mlx26.core.dp_mix.figure import cost_rows

    rows = [{"eps": e, "delta": 1e-5, "mechanism": "gaussian", "l1": 1 / e, "l2": 1 / e**2} for e in (1, 2)]
    assert cost_rows([(1.0, 1e-5), (2.0, 1e-5)], rows, 1.0) == (1e-5, rows, False)
    r = run_cli("dp-mix", "compare", "-e", "1", "-e", "2", "-d", "1e-5", "-q", "--format", "json",
                "--plot", tmp_path / "c.png")
    assert r.code == 0, r.stderr
    assert_png(tmp_path / "c.png", 3)


def test_existing_plot_needs_force(run_cli, tmp_path):
    png = tmp_path / "c.png"
    png.write_bytes(b"keep me")
    r = run_cli(*COMPARE, "--plot", png)
    assert r.code == 2 and "refusing to overwrite" in r.stderr and "--force" in r.stderr
    assert png.read_bytes() == b"keep me"
    r = run_cli(*COMPARE, "--plot", png, "--force")
    assert r.code == 0, r.stderr
    assert_png(png, 3)


def test_plot_must_be_png(run_cli, tmp_path):
    r = run_cli(*COMPARE, "--plot", tmp_path / "x.jpg")
    assert r.code == 2 and ".png" in r.stderr
    assert not (tmp_path / "x.jpg").exists()
    assert run_cli(*COMPARE, "--plot", tmp_path / "missing" / "x.png").code == 2


def test_plot_without_matplotlib_exits_3(run_cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    r = run_cli(*COMPARE, "--plot", tmp_path / "c.png")
    assert r.code == 3 and "pip install 'mlx26[plot]'" in r.stderr and "matplotlib" in r.stderr
    assert r.stdout == ""  # refused before any work
    assert not (tmp_path / "c.png").exists()


def test_mlx26_force_replaces_the_plot(run_cli, tmp_path, monkeypatch):
    png = tmp_path / "c.png"
    png.write_bytes(b"old")
    monkeypatch.setenv("MLX26_FORCE", "1")
    assert run_cli(*COMPARE, "--plot", png).code == 0
    assert_png(png, 3)
