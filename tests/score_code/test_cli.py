"""`mlx26 score-code` through the CLI: outputs, stdin vs file, bad inputs, error paths and exit codes."""

from __future__ import annotations

import json
import subprocess

import pytest
from mlx26.core.score_code import analyzers

VULN = 'import os\n\n\ndef handle(cur, payload, sock):\n    name = input("name: ")\n\n    os.system("ping -c 1 " + name)\n    return None\n'
SAFE = 'import json\n\n\ndef load(blob):\n    obj = json.loads(blob)\n    return obj\n'


def _jsonl(result):
    assert result.code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.parametrize("sub", ["score", "detect", "label", "corpus", "train", "rank"])
def test_help(run_cli, sub):
    result = run_cli("score-code", sub, "--help")
    assert result.code == 0 and "Examples:" in result.stdout


@pytest.mark.parametrize("source", ["stdin", "file"])
def test_score_stdin_and_file_agree(run_cli, tmp_path, source):
    if source == "stdin":
        rows = _jsonl(run_cli("score-code", "score", "-", stdin=VULN))
    else:
        path = tmp_path / "v.py"
        path.write_text(VULN)
        rows = _jsonl(run_cli("score-code", str(path)))  # default subcommand
    assert [(r["start_line"], r["end_line"]) for r in rows] == [(1, 1), (4, 5), (7, 8)]
    assert all(set(r) == {"file", "step", "start_line", "end_line", "text", "score"} for r in rows)
    again = _jsonl(run_cli("score-code", "score", "-", stdin=VULN))
    assert [r["score"] for r in rows] == [r["score"] for r in again]


def test_score_is_causal_through_the_cli(run_cli):
    full = _jsonl(run_cli("score-code", "-", "--segment", "line", stdin=VULN))
    head = _jsonl(run_cli("score-code", "-", "--segment", "line", stdin="\n".join(VULN.splitlines()[:5]) + "\n"))
    assert [r["score"] for r in head] == [r["score"] for r in full[:len(head)]]


def test_stream_matches_batch(run_cli):
    batch = _jsonl(run_cli("score-code", "-", "--segment", "logical", stdin=VULN))
    stream = _jsonl(run_cli("score-code", "score", "-", "--stream", "--segment", "logical", stdin=VULN))
    assert stream == batch


def test_detect_verdicts_follow_the_aggregate(run_cli, tmp_path):
    (tmp_path / "a.py").write_text(VULN)
    (tmp_path / "b.py").write_text(SAFE)
    import numpy as np
    from scipy.special import logsumexp, softmax

    steps = {}  # independent reference: the per-step scores from `score`, aggregated with numpy/scipy
    for r in _jsonl(run_cli("score-code", "score", str(tmp_path))):
        steps.setdefault(r["file"], []).append(r["score"])
    reference = {"softmax": lambda x: float(softmax(-x / 0.1) @ x), "min": np.min, "mean": np.mean,
                 "last": lambda x: x[-1], "lse": lambda x: float(-0.1 * (logsumexp(-x / 0.1) - np.log(len(x)))),
                 "cvar": lambda x: float(np.sort(x)[:int(np.ceil(0.2 * len(x)))].mean())}
    for agg in ("softmax", "min", "mean", "last", "lse", "cvar"):
        rows = _jsonl(run_cli("score-code", "detect", str(tmp_path), "--agg", agg))
        assert [r["file"].rsplit("/", 1)[1] for r in rows] == ["a.py", "b.py"]
        for r in rows:
            x = np.array(steps[r["file"]])
            assert r["steps"] == len(x) and r["aggregate"] == pytest.approx(float(reference[agg](x)), abs=1e-12)
            assert r["vulnerable"] == (r["aggregate"] <= 0)
            scores = [s["score"] for s in r["riskiest"]]
            assert scores == sorted(scores)
    rows = _jsonl(run_cli("score-code", "detect", str(tmp_path), "--agg", "min"))
    failing = run_cli("score-code", "detect", str(tmp_path), "--agg", "min", "--fail-on-vuln")
    assert rows[0]["vulnerable"] and failing.code == 1 and "judged vulnerable" in failing.stderr
    assert run_cli("score-code", "detect", str(tmp_path / "b.py"), "--fail-on-vuln").code == 0


def test_shipped_model_flags_the_classic_injection_and_passes_the_safe_file(run_cli):
    v = _jsonl(run_cli("score-code", "detect", "-", stdin=VULN))[0]
    s = _jsonl(run_cli("score-code", "detect", "-", stdin=SAFE))[0]
    assert v["vulnerable"] and not s["vulnerable"]
    assert v["riskiest"][0]["start_line"] == 7


def test_detect_function_units_and_prefix(run_cli):
    code = SAFE + "\n\n" + VULN.replace("import os\n", "import os\n", 1)
    rows = _jsonl(run_cli("score-code", "detect", "-", "--unit", "function", stdin=code))
    assert {r["unit"] for r in rows} >= {"load", "handle"}
    part = _jsonl(run_cli("score-code", "detect", "-", "--prefix", "0.5", stdin=VULN))[0]
    assert part["end_line"] <= 4


def test_bad_and_odd_inputs(run_cli, tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n    x = (1,\n")
    (tmp_path / "latin1.py").write_bytes("x = 'caf\xe9'\n".encode("latin-1"))
    (tmp_path / "crlf.py").write_bytes(b"a = 1\r\n\r\nb = 2\r\n")
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "bin.py").write_bytes(b"\x00\x01\x02abc")
    result = run_cli("score-code", "score", str(tmp_path), "--segment", "ast")
    rows = _jsonl(result)
    files = {r["file"].rsplit("/", 1)[1] for r in rows}
    assert files == {"broken.py", "latin1.py", "crlf.py"}
    assert "empty file, skipped" in result.stderr and "binary file" in result.stderr
    assert "not valid UTF-8" in result.stderr and "does not parse" in result.stderr
    assert [(r["start_line"], r["text"]) for r in rows if r["file"].endswith("crlf.py")] == [(1, "a = 1"),
                                                                                             (3, "b = 2")]
    assert "\ufffd" in next(r["text"] for r in rows if r["file"].endswith("latin1.py"))


def test_long_file_warns_about_the_window(run_cli):
    code = "".join(f"x{i} = {i}\n" for i in range(300))
    result = run_cli("score-code", "-", "--segment", "line", stdin=code)
    assert result.code == 0 and len(result.stdout.splitlines()) == 300
    assert "sliding window" in result.stderr


@pytest.mark.parametrize(("args", "needle"), [
    (["score", "-", "--segment", "sentence"], "Unknown segmentation"),
    (["score", "-", "--model", "gpt"], "Unknown model"),
    (["detect", "-", "--agg", "median"], "Unknown aggregator"),
    (["detect", "-", "--tau", "0"], "tau"),
    (["detect", "-", "--agg", "cvar", "--alpha", "2"], "alpha"),
    (["detect", "-", "--prefix", "0"], "--prefix"),
    (["score", "no/such/file.py"], "not found"),
    (["label", "-", "--analyzers", "pylint"], "Unknown analyzer"),
    (["label", "-", "--analyzers", "semgrep", "--rules", "p/python"], "registry config"),
    (["label", "-", "--analyzers", "semgrep", "--rules", "auto"], "network"),
    (["rank"], "--candidates"),
    (["rank", "--prompt", "import os\n"], "--llm"),
    (["score", "-", "--model-dir", "/nonexistent-dir"], "no linear model"),
])
def test_usage_errors(run_cli, args, needle):
    result = run_cli("score-code", *args, stdin=VULN)
    assert result.code == 2, result.stderr
    assert result.error_lines[0].startswith("Error:") and needle in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_rank_ignores_llm_env_with_candidates(run_cli, monkeypatch):
    monkeypatch.setenv("MLX26_LLM", "scripted:demo")
    rows = _jsonl(run_cli("score-code", "rank", "--candidates", "-", stdin='{"candidate": "x = 1\\n"}\n'))
    assert len(rows) == 1 and rows[0]["rank"] == 1


def test_missing_second_file_fails_before_any_output(run_cli, tmp_path):
    (tmp_path / "a.py").write_text(VULN)
    result = run_cli("score-code", "score", str(tmp_path / "a.py"), str(tmp_path / "nope.py"))
    assert result.code == 2 and result.stdout == "" and "nope.py" in result.stderr


def test_nothing_piped(run_cli):
    result = run_cli("score-code", "score", "-", stdin=None)
    assert result.code == 2 and "nothing piped" in result.stderr


def test_missing_analyzer_exit_3_with_hint(run_cli, monkeypatch):
    monkeypatch.setattr(analyzers, "available", lambda name: False)
    result = run_cli("score-code", "label", "-", "--analyzers", "bandit", stdin=VULN)
    assert result.code == 3
    assert "not installed" in result.stderr and "pip install 'mlx26[score-code]'" in result.stderr


@pytest.mark.skipif(not analyzers.available("bandit"), reason="bandit not installed")
def test_label_with_bandit_and_monotone(run_cli):
    rows = _jsonl(run_cli("score-code", "label", "-", "--segment", "line", "--label-mode", "monotone", stdin=VULN))
    local = _jsonl(run_cli("score-code", "label", "-", "--segment", "line", stdin=VULN))
    assert [r["start_line"] for r in local if r["label"]] == [7]  # bandit B605 on os.system only
    first = next(i for i, r in enumerate(local) if r["label"])
    assert [r["label"] for r in rows] == [0] * first + [1] * (len(rows) - first)


def test_label_fix_pair(run_cli, tmp_path):
    vuln, fixed = tmp_path / "v.py", tmp_path / "f.py"
    vuln.write_text(VULN)
    fixed.write_text(VULN.replace('os.system("ping -c 1 " + name)', 'subprocess.run(["ping", "-c", "1", name])'))
    rows = _jsonl(run_cli("score-code", "label", str(vuln), "--fixed", str(fixed), "--segment", "line"))
    assert [r["start_line"] for r in rows if r["label"]] == [7]
    assert all(r["rules"] == (["fix-diff"] if r["label"] else []) for r in rows)


def test_corpus_train_and_score_with_trained_model(run_cli, tmp_path):
    data = tmp_path / "corpus.jsonl"
    assert run_cli("score-code", "corpus", "--n", "24", "--seed", "3", "-o", str(data)).code == 0
    records = [json.loads(x) for x in data.read_text().splitlines()]
    assert len(records) == 24 and all("vulnerable_lines" in r for r in records)
    out = tmp_path / "model"
    result = run_cli("score-code", "train", "--model", "linear", "--data", str(data), "--out", str(out), "-q",
                     "--format", "json")
    entry = json.loads(result.stdout)
    assert entry["data"]["records"] == 24 and entry["models"]["linear"]["file"] == "linear.npz"
    again = run_cli("score-code", "train", "--model", "linear", "--data", str(data), "--out", str(out))
    assert again.code == 2 and "--force" in again.stderr
    rows = _jsonl(run_cli("score-code", "-", "--model-dir", str(out), stdin=VULN))
    assert len(rows) == 3


def test_rank_candidates_and_best(run_cli, tmp_path):
    cands = tmp_path / "c.jsonl"
    cands.write_text("\n".join(json.dumps(r) for r in [
        {"id": "shell", "prefix": "import os\n", "candidate": "def f(name):\n    os.system('ping ' + name)\n"},
        {"id": "argv", "prefix": "import os\n", "candidate": "import subprocess\n\ndef f(name):\n"
                                                               "    subprocess.run(['ping', name])\n"},
    ]) + "\n")
    rows = _jsonl(run_cli("score-code", "rank", "--candidates", str(cands)))
    assert [r["rank"] for r in rows] == [1, 2]
    assert [r["id"] for r in rows] == ["argv", "shell"]  # the argv call outranks the shell string
    assert rows[0]["reward"] > rows[1]["reward"]
    best = _jsonl(run_cli("score-code", "rank", "--candidates", str(cands), "--best"))
    assert len(best) == 1 and best[0]["id"] == rows[0]["id"]
    bad = run_cli("score-code", "rank", "--candidates", "-", stdin='{"id": 1}\n')
    assert bad.code == 2 and "candidate" in bad.stderr
    bad = run_cli("score-code", "rank", "--candidates", "-", stdin='{"candidate": "x = 1\\n", "prefix": 5}\n')
    assert bad.code == 2 and "'prefix'" in bad.stderr and "internal error" not in bad.stderr


@pytest.mark.parametrize("record", ['{"code": 5, "vulnerable_lines": [1]}', '{"code": "x = 1\\n", "vulnerable_lines": "a"}',
                                    '{"code": "x = 1\\n", "vulnerable_lines": [[1]]}',
                                    '{"text": "x = 1", "label": 1, "step": "first"}'])
def test_train_rejects_malformed_code_records(run_cli, tmp_path, record):
    data = tmp_path / "d.jsonl"
    data.write_text(record + "\n")
    result = run_cli("score-code", "train", "--model", "linear", "--data", str(data), "--out", str(tmp_path / "m"))
    assert result.code == 2 and "training record 1" in result.stderr and "internal error" not in result.stderr


def test_corrupt_model_files_are_usage_errors(run_cli, tmp_path):
    import numpy as np
    from mlx26.core.score_code.prm import SHIPPED_DIR

    garbage, partial = tmp_path / "garbage", tmp_path / "partial"
    garbage.mkdir()
    partial.mkdir()
    (garbage / "linear.npz").write_text("not a model\n")
    with np.load(SHIPPED_DIR / "linear.npz") as arrays:
        np.savez(partial / "linear.npz", **{k: arrays[k] for k in arrays.files if k != "weights"})
    for folder, detail in ((garbage, "not an .npz archive"), (partial, "missing array 'weights'")):
        result = run_cli("score-code", "score", "-", "--model-dir", str(folder), stdin=VULN)
        assert result.code == 2 and result.stdout == "", result.stderr
        assert result.error_lines[0] == f"Error: {folder / 'linear.npz'} is not a valid linear model ({detail})."


def test_label_fixed_binary_file_is_a_usage_error(run_cli, tmp_path):
    vuln, fixed = tmp_path / "v.py", tmp_path / "f.py"
    vuln.write_text(VULN)
    fixed.write_bytes(b"\x00\x01binary")
    result = run_cli("score-code", "label", str(vuln), "--fixed", str(fixed))
    assert result.code == 2 and "--fixed" in result.stderr and "internal error" not in result.stderr
    assert result.stdout == ""


def test_rank_generates_with_an_llm_backend(run_cli, tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [{"match": "", "replies": [
        "    os.system('ping ' + host)\n", "    subprocess.run(['ping', host])\n"]}]}))
    rows = _jsonl(run_cli("score-code", "rank", "--prompt", "import os\nimport subprocess\n\ndef f(host):\n",
                          "--llm", f"scripted:{rules}", "--n", "2"))
    assert len(rows) == 2 and {r["id"] for r in rows} == {"gen0", "gen1"}
    assert rows[0]["reward"] >= rows[1]["reward"]


def test_entry_point_pipeline(mlx26_exe, subprocess_env):
    proc = subprocess.run(f"printf 'import os\\nos.system(x)\\n' | '{mlx26_exe}' score-code detect - --format csv",
                          shell=True, capture_output=True, text=True, env=subprocess_env, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.splitlines()[0].startswith("file,unit,start_line")


@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_stream_refuses_whole_document_formats(run_cli, fmt):
    result = run_cli("score-code", "score", "-", "--stream", "--format", fmt, stdin="import os\n")
    assert result.code == 2 and "--stream writes JSONL" in result.error_lines[0] and result.stdout == ""


def test_folder_without_python_files_is_an_error_not_silence(run_cli, tmp_path):
    (tmp_path / "notes.txt").write_text("not code")
    result = run_cli("score-code", tmp_path)
    assert result.code == 2 and "no Python files" in result.error_lines[0] and result.stdout == ""


def test_semgrep_relative_rules_apply_and_bad_rules_are_refused(run_cli, tmp_path, monkeypatch):
    from mlx26.core.score_code import analyzers

    if not analyzers.available("semgrep"):
        pytest.skip("semgrep not installed")
    import shutil

    shutil.copy(analyzers.RULES_DIR / "python-security.yaml", tmp_path / "mine.yaml")
    (tmp_path / "bad.yaml").write_text("rules: 5\n")
    (tmp_path / "v.py").write_text('import os\nos.system("ls " + input())\n')
    monkeypatch.chdir(tmp_path)  # semgrep runs in a staging folder: a relative --rules path must still resolve
    rows = _jsonl(run_cli("score-code", "label", "v.py", "--analyzers", "semgrep", "--rules", "mine.yaml"))
    assert any(r["label"] == 1 for r in rows)
    bad = run_cli("score-code", "label", "v.py", "--analyzers", "semgrep", "--rules", "bad.yaml")
    assert bad.code == 2 and "semgrep could not use --rules bad.yaml" in bad.error_lines[0] and bad.stdout == ""
