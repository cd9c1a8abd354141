"""`mlx26 profile-memory` through the CLI: records, shares, formats, every documented error path."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SMALL = ["--model", "tiny-llama", "--context", "300", "--decode-steps", "2", "--budget", "64"]


def _rows(result):
    assert result.code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_help(run_cli):
    result = run_cli("profile-memory", "--help")
    assert result.code == 0 and "Examples:" in result.stdout and "--fpga-backend" in result.stdout


def test_quest_records_and_share(run_cli):
    result = run_cli("profile-memory", *SMALL, "--format", "jsonl")
    rows = _rows(result)
    stages = [r["stage"] for r in rows]
    assert stages == ["setup: context prefill", "prepare", "relevancy", "retrieval", "apply", "other", "total"]
    total = rows[-1]
    timed = rows[1:-1]
    assert sum(r["time_s"] for r in timed) == pytest.approx(total["time_s"], rel=0.05)
    assert abs(total["sum_vs_end_to_end"]) < 0.05
    assert total["memory_share"] == pytest.approx(sum(r["share"] for r in timed[:3]), rel=1e-6)
    assert "memory-processing share" in result.stderr and "MODELLED" in result.stderr
    for r in timed:
        assert r["flops"] >= 0 and r["bytes"] > 0 and r["bound"] in ("memory", "compute")
        assert r["time_kind"] == "measured"
    assert total["paper_speedup"] == "1.04–2.2×" and "MODELLED" in total["modelled"]
    assert total["batch"] == 1


def test_all_pipelines_and_fpga_emu(run_cli):
    rows = _rows(run_cli("profile-memory", "--pipeline", "all", "--device", "fpga", *SMALL[:2], "--context", "600",
                         "--decode-steps", "1", "--budget", "64", "-q"))
    totals = {r["pipeline"]: r for r in rows if r["stage"] == "total"}
    assert set(totals) == {"quest", "indexer", "rag", "memory"}
    quest_fpga = [r for r in rows if r["pipeline"] == "quest" and r["device"] == "fpga" and r["stage"] != "total"]
    assert {r["stage"] for r in quest_fpga} == {"prepare", "relevancy", "retrieval"}
    assert all("NOT an FPGA time" in r["time_kind"] for r in quest_fpga)
    assert all(r["modelled_U55C_s"] > 0 for r in quest_fpga)
    assert totals["rag"]["topk_matches_anchor"] is True
    quest = totals["quest"]
    assert quest["fpga_kernel_gb_s"] == pytest.approx({"page_minmax": 14.375, "page_score": 28.75,
                                                       "topk_select": 1.2, "gather_rows": 28.75})
    assert quest["fpga_datasheet_mem_gb_s"] == 460 and "DERIVED" in quest["fpga_kernel_gb_s_basis"]


def test_bf16_halves_the_bytes_of_the_float_stages(run_cli):
    fp32, bf16 = (_rows(run_cli("profile-memory", *SMALL, "--dtype", d, "--format", "jsonl")) for d in ("fp32", "bf16"))
    assert fp32[-1]["dtype"] == "fp32" and bf16[-1]["dtype"] == "bf16"
    for a, b in zip(fp32[1:-1], bf16[1:-1], strict=True):
        assert a["stage"] == b["stage"]
        if a["stage"] in ("prepare", "relevancy", "apply", "other"):  # all float traffic: exactly half
            assert b["bytes"] == pytest.approx(a["bytes"] / 2, rel=1e-12)
        else:  # retrieval also moves int64 indices, whose size does not change
            assert a["bytes"] / 2 < b["bytes"] < a["bytes"]


def test_table_is_compact(run_cli):
    result = run_cli("profile-memory", *SMALL, "-q", "--format", "table")
    assert result.code == 0
    assert "memory_share" in result.stdout and "speedup" in result.stdout and "modelled_MI210_s" not in result.stdout


def test_output_file_and_force(run_cli, tmp_path):
    out = tmp_path / "p.jsonl"
    assert run_cli("profile-memory", *SMALL, "-q", "-o", out).code == 0
    assert len(out.read_text().splitlines()) == 7
    again = run_cli("profile-memory", *SMALL, "-q", "-o", out)
    assert again.code == 2 and "--force" in again.stderr


def test_clamp_warns(run_cli):
    result = run_cli("profile-memory", *SMALL[:4], "--decode-steps", "1", "--budget", "100000")
    assert result.code == 0 and "clamped" in result.stderr


def test_specs_file_changes_the_model(run_cli, tmp_path):
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps({"gpu": "A100"}))
    total = _rows(run_cli("profile-memory", *SMALL, "-q", "--specs", spec, "--format", "jsonl"))[-1]
    assert total["gpu_spec"] == "A100"


def test_batch_on_fpga_names_batch_and_scales_the_offloaded_bytes(run_cli):
    """--batch 3 --device fpga: the per-sequence kernels run on every sequence; the offloaded stages' bytes are
    3 × those of the batch-1 run (each sequence has its own KV), the "other" bytes grow far less."""
    one, three = (_rows(run_cli("profile-memory", *SMALL, "--device", "fpga", "--batch", b, "--format", "jsonl", "-q"))
                  for b in ("1", "3"))
    assert three[-1]["batch"] == 3 and three[-1]["context"] == 300
    by_stage = {r["stage"]: r for r in one}
    for row in three[1:-1]:
        base = by_stage[row["stage"]]
        if row["stage"] == "other":
            assert row["flops"] == 3 * base["flops"] and row["bytes"] < 1.01 * base["bytes"]
        else:
            assert row["flops"] == 3 * base["flops"] and row["bytes"] == 3 * base["bytes"]


@pytest.mark.parametrize(("args", "code", "needle"), [
    (["--device", "gpu"], 3, "no CUDA/ROCm device"),
    (["--device", "fpga", "--fpga-backend", "xrt"], 3, "pyxrt"),
    (["--context", "5000"], 2, "exceeds the model's 1024 positions"),
    (["--budget", "0"], 2, "--budget"),
    (["--budget", "-5"], 2, "--budget"),
    (["--pipeline", "qest"], 2, "Did you mean 'quest'?"),
    (["--device", "tpu"], 2, "Unknown device"),
    (["--placement", "both"], 2, "Unknown placement"),
    (["--model", "no-such-model"], 2, "Unknown model"),
    (["--pipeline", "all"], 2, "at least 2 segments"),
    (["--decode-steps", "0"], 2, "--decode-steps"),
    (["--specs", "/no/such.json"], 2, "spec file not found"),
    (["--dtype", "fp16"], 2, "Unknown dtype"),
    (["--device", "fpga", "--dtype", "bf16"], 2, "float32"),
    (["--batch", "0"], 2, "--batch must be ≥ 1"),
    (["--pipeline", "rag", "--batch", "2"], 2, "one prompt per request"),
    (["--pipeline", "all", "--context", "600", "--batch", "2"], 2, "one prompt per request"),
])
def test_bad_input(run_cli, args, code, needle):
    full = ["--model", "tiny-llama", "--context", "300", "--decode-steps", "1", *args]
    result = run_cli("profile-memory", *full)
    assert result.code == code, result.stderr
    assert result.error_lines[0].startswith("Error:") and needle in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_fpga_topk_limit_is_checked_before_the_model_loads(run_cli, monkeypatch):
    import mlx26.core.zoo as zoo

    def no_load(*_a, **_k):
        raise AssertionError("the model was loaded before the option check")

    monkeypatch.setattr(zoo, "load_model", no_load)
    result = run_cli("profile-memory", "--device", "fpga", "--pipeline", "indexer", "--model", "tiny-llama-long",
                     "--context", "6000", "--decode-steps", "1", "--budget", "5000")
    assert result.code == 2, result.stderr
    assert result.error_lines[0].startswith("Error:") and "at most 4096" in result.stderr and result.stdout == ""


def test_gpu_absent_is_exit_3_not_fallback(run_cli, torch1):
    if torch1.cuda.is_available():
        pytest.skip("a GPU is present")
    result = run_cli("profile-memory", "--device", "gpu", *SMALL)
    assert result.code == 3 and "Hint:" in result.stderr


def test_xrt_hint_names_xrt_not_pypi(run_cli):
    result = run_cli("profile-memory", "--device", "fpga", "--fpga-backend", "xrt", *SMALL)
    assert result.code == 3
    hint = [line for line in result.error_lines if line.startswith("Hint:")][0]
    assert "XRT" in hint and "not with PyPI" in hint and "--fpga-backend emu" in hint


def test_malformed_spec_json(run_cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    result = run_cli("profile-memory", *SMALL, "--specs", bad)
    assert result.code == 2 and "cannot parse spec file" in result.stderr


def test_compiler_failure_shows_stderr(run_cli, tmp_path, monkeypatch):
    fake = tmp_path / "fake-g++"
    fake.write_text("#!/bin/sh\necho 'fake-g++: error: simulated compiler failure' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("MLX26_CXX", str(fake))
    monkeypatch.setenv("MLX26_HOME", str(tmp_path / "home"))
    import mlx26.fpga.emu as emu

    monkeypatch.setattr(emu, "_KERNELS", None)
    result = run_cli("profile-memory", "--device", "fpga", *SMALL)
    assert result.code == 1
    assert "simulated compiler failure" in result.stderr
    assert any(line.startswith("Error:") and "failed building" in line for line in result.error_lines)


def test_missing_compiler_is_exit_3_with_install_hint(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("MLX26_CXX", str(tmp_path / "no-such-g++"))
    monkeypatch.setenv("MLX26_HOME", str(tmp_path / "home"))
    import mlx26.fpga.emu as emu

    monkeypatch.setattr(emu, "_KERNELS", None)
    result = run_cli("profile-memory", "--device", "fpga", *SMALL)
    assert result.code == 3, result.stderr
    assert result.error_lines[0].startswith("Error:") and "not found" in result.error_lines[0]
    assert result.error_lines[1:] == ["Hint: install g++ (apt-get install g++) or set MLX26_CXX"]


def test_entry_point_subprocess(mlx26_exe, subprocess_env):
    env = dict(subprocess_env, MLX26_THREADS="1")
    proc = subprocess.run([mlx26_exe, "profile-memory", *SMALL, "--pipeline", "rag", "--decode-steps", "1", "-q",
                           "--format", "csv"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("pipeline,stage,device,time_s") and proc.stderr == ""


def test_help_does_not_import_torch():
    code = "import sys; from mlx26.cli.main import app; import mlx26.cli.profile_memory; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert out.stdout.strip() == "False"


def test_model_folder_and_unsupported_architecture(run_cli, tmp_path, torch1):
    from mlx26.core.zoo import resolve_model_path
    from transformers import GPT2Config, GPT2LMHeadModel

    folder = resolve_model_path("tiny-llama")  # a plain save_pretrained folder
    ok = _rows(run_cli("profile-memory", "--model", folder, "--context", "200", "--decode-steps", "1", "-q"))
    assert ok[-1]["model"] == folder
    gpt2 = tmp_path / "gpt2"
    GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=300, n_positions=512)).save_pretrained(gpt2)
    result = run_cli("profile-memory", "--model", gpt2, "--context", "200", "--decode-steps", "1")
    assert result.code == 2 and "Llama-family" in result.stderr
