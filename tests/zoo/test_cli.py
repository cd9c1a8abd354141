"""`mlx26 zoo list | info | path | eval | tokenizer` through the CLI, in-process and as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.mark.parametrize("sub", ["train", "eval", "list", "info", "path", "tokenizer"])
def test_help(run_cli, sub):
    result = run_cli("zoo", sub, "--help")
    assert result.code == 0 and "Examples:" in result.stdout


def test_list_shows_trained_and_random_init(run_cli):
    rows = [json.loads(line) for line in run_cli("zoo", "list").stdout.splitlines()]
    by = {r["name"]: r for r in rows}
    assert {"tiny-llama", "tiny-llama-draft", "tiny-moe", "tiny-llama-long"} <= set(by)
    assert by["tiny-llama"]["kind"] == "trained" and 0 < by["tiny-llama"]["bpb"] < 8
    assert by["tiny-moe"]["family"] == "mixtral" and by["tiny-llama"]["params"] == 1_377_408
    assert by["tiny-llama-long"]["kind"] == "random-init, timing only"


def test_list_table_on_a_terminal(run_cli):
    result = run_cli("zoo", "list", tty=True)
    assert result.code == 0 and "tiny-llama-draft" in result.stdout and "random-init" in result.stdout


def test_info_is_the_manifest(run_cli):
    result = run_cli("zoo", "info", "tiny-moe", "--format", "json")
    assert result.code == 0
    m = json.loads(result.stdout)
    assert m["preset"] == "tiny-moe" and m["config"]["num_local_experts"] >= 8
    assert m["config"]["num_experts_per_tok"] == 2


def test_path_prints_the_folder(run_cli):
    result = run_cli("zoo", "path", "tiny-llama")
    assert result.code == 0 and os.path.isfile(os.path.join(result.stdout.strip(), "config.json"))


def test_eval_rows_side_by_side(run_cli):
    result = run_cli("zoo", "eval", "tiny-llama-draft", "--max-bytes", "16384")
    assert result.code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["method"] for r in rows] == ["tiny-llama-draft", "xz -9e", "bz2 -9", "gzip -9"]
    assert len({r["bytes"] for r in rows}) == 1 and rows[0]["bytes"] <= 16384
    assert rows[1]["ratio_to_xz"] == 1.0
    assert all(0 < r["bits_per_byte"] < 8 for r in rows)


def test_eval_moe_prints_the_histogram(run_cli):
    result = run_cli("zoo", "eval", "tiny-moe", "--max-bytes", "8192", "--no-baselines")
    assert result.code == 0, result.stderr
    assert "expert load, layer 0" in result.stderr and "expert  7" in result.stderr
    row = json.loads(result.stdout.splitlines()[0])
    assert row["dead_experts"] == 0 and len(row["expert_load"]) == 2


def test_eval_other_corpus(run_cli):
    result = run_cli("zoo", "eval", "tiny-llama-draft", "--corpus", "stdlib-prose", "--max-bytes", "4096",
                     "--no-baselines", "--format", "json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)[0]["corpus"] == "stdlib-prose"


def test_eval_a_user_file_and_stdin_score_the_same_bytes(run_cli, tmp_path):
    """--file scores any text: the same bytes from a file and from stdin give the same rows; a text longer
    than --max-bytes is cut at a line end; the compressors see exactly those bytes."""
    import lzma

    lines = [f"def handler_{i}(request, limit={i}):\n    return request.get('k{i}', limit) * {i}\n" for i in range(300)]
    text = "".join(lines)
    path = tmp_path / "mine.py"
    path.write_text(text)
    from_file = run_cli("zoo", "eval", "tiny-llama-draft", "--file", path, "--max-bytes", "4096", "--format", "json")
    from_stdin = run_cli("zoo", "eval", "tiny-llama-draft", "--file", "-", "--max-bytes", "4096", "--format", "json",
                         stdin=text)
    assert from_file.code == from_stdin.code == 0, from_file.stderr
    a, b = json.loads(from_file.stdout), json.loads(from_stdin.stdout)
    assert a[0]["corpus"] == str(path) and b[0]["corpus"] == "stdin"
    assert [r["bits_per_byte"] for r in a] == [r["bits_per_byte"] for r in b]
    kept = a[0]["bytes"]
    assert kept <= 4096 and text.encode()[:kept].endswith(b"\n") and kept > 4096 - len(lines[-1])
    xz = len(lzma.compress(text.encode()[:kept], preset=9 | lzma.PRESET_EXTREME)) * 8 / kept
    assert a[1]["method"] == "xz -9e" and a[1]["bits_per_byte"] == pytest.approx(xz, rel=0.02)


@pytest.mark.parametrize(("make", "extra", "needle"), [
    (lambda p: p.write_bytes(b"\xff\xfe\x00binary"), [], "not UTF-8"),
    (lambda p: p.write_text("   \n"), [], "is empty"),
    (lambda p: p.write_text("x = 1\n"), ["--corpus", "stdlib-prose"], "not both"),
])
def test_eval_file_errors(run_cli, tmp_path, make, extra, needle):
    path = tmp_path / "in.txt"
    make(path)
    result = run_cli("zoo", "eval", "tiny-llama-draft", "--file", path, *extra)
    assert result.code == 2 and needle in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(("args", "needle"), [
    (["eval", "tiny-lama"], "Did you mean 'tiny-llama'"),
    (["eval", "tiny-llama", "--corpus", "shakespear"], "Did you mean 'shakespeare'"),
    (["eval", "tiny-llama", "--max-bytes", "10"], "--max-bytes"),
    (["info", "nope-model"], "Unknown model 'nope-model'"),
    (["path", "tiny_moe"], "Did you mean 'tiny-moe'"),
    (["info", "./no/such/folder"], "no such model folder: ./no/such/folder"),
    (["train", "micro-llama", "--steps", "1", "--batch-size", "100000", "--out", "never-made"],
     "use --batch-size ≤ 1024"),
    (["tokenizer", "--max-bytes", "0", "--out", "never-made"], "--max-bytes"),
])
def test_bad_input(run_cli, args, needle):
    result = run_cli("zoo", *args)
    assert result.code == 2, result.stderr
    assert result.error_lines[0].startswith("Error:") and needle in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_out_under_a_file_is_refused_before_work(run_cli, tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    for args in (["train", "micro-llama", "--steps", "1", "--out", blocker / "run"],
                 ["tokenizer", "--vocab-size", "300", "--max-bytes", "20000", "--out", blocker, "--force"]):
        result = run_cli("zoo", *args)
        assert result.code == 2 and result.stdout == "", result.stderr
        assert "file.txt" in result.error_lines[0] and "internal error" not in result.stderr
    assert blocker.read_text() == "x"


def test_eval_output_file_needs_force(run_cli, tmp_path):
    target = tmp_path / "e.json"
    target.write_text("{}")
    result = run_cli("zoo", "eval", "tiny-llama-draft", "--max-bytes", "2048", "-o", str(target))
    assert result.code == 2 and "--force" in result.stderr and target.read_text() == "{}"


def test_tokenizer_command(run_cli, tmp_path):
    result = run_cli("zoo", "tokenizer", "--vocab-size", "300", "--max-bytes", "30000", "--out", str(tmp_path / "t"))
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["vocab_size"] == 300
    again = run_cli("zoo", "tokenizer", "--out", str(tmp_path / "t"))
    assert again.code == 2 and "already exists" in again.stderr


def test_entry_point_offline(mlx26_exe, subprocess_env):
    env = {**subprocess_env, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([mlx26_exe, "zoo", "eval", "tiny-llama-draft", "--max-bytes", "4096", "--format", "json"],
                          capture_output=True, text=True, env=env, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["method"] == "tiny-llama-draft"


def test_cli_module_does_not_import_torch():
    code = "import sys, mlx26.cli.zoo; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize("context", ["0", "100000"])
def test_eval_context_out_of_range_is_refused_not_clamped(run_cli, context):
    result = run_cli("zoo", "eval", "tiny-llama-draft", "--max-bytes", "2048", "--context", context)
    assert result.code == 2 and "--context must be in [2, 1024]" in result.stderr and result.stdout == ""


def test_damaged_model_folder_is_a_one_line_input_error_naming_the_file(run_cli, tmp_path):
    (tmp_path / "config.json").write_text("{bad")
    for args in (["zoo", "info", tmp_path], ["zoo", "eval", tmp_path, "--max-bytes", "2048"]):
        result = run_cli(*args)
        assert result.code == 2 and "config.json is not valid JSON" in result.error_lines[0], result.stderr
    result = run_cli("quantize-moe", "--model", tmp_path)
    assert result.code == 2 and "cannot load the model in" in result.error_lines[0]


def test_a_checkpoint_missing_weights_is_refused_not_filled_with_random_values(run_cli, tmp_path):
    # transformers would initialise the missing tensors at random and score that model; e.g. a quantize-moe
    # --out folder keeps its experts in its own file, so plain loading lacks them.
    from mlx26.core.zoo import load_model
    from safetensors.torch import load_file, save_file

    load_model("tiny-llama-draft").save_pretrained(tmp_path)
    weights = load_file(str(tmp_path / "model.safetensors"))
    dropped = sorted(k for k in weights if "mlp.down_proj" in k)[0]
    save_file({k: v for k, v in weights.items() if k != dropped}, str(tmp_path / "model.safetensors"),
              metadata={"format": "pt"})
    (tmp_path / "quantize_moe.json").write_text("{}")
    result = run_cli("zoo", "eval", tmp_path, "--max-bytes", "2048")
    assert result.code == 2 and "lacks 1 weight tensor(s)" in result.error_lines[0] and dropped in result.stderr
    assert "quantize-moe --model DIR" in result.stderr and "Traceback" not in result.stderr
    assert "LOAD REPORT" not in result.stderr  # transformers' own report is not printed beside ours
