"""`mlx26 judge-audit` through the CLI: every subcommand, stdin and files, the LLM judge against
`mlx26 llm serve`'s server with scripted replies and through replay files, and every bad input."""

from __future__ import annotations

import json
import subprocess

import pytest

SUBS = ["metrics", "asr", "concordance", "reliable", "stress", "judge", "simulate"]
SAFE_TEXT = "I'm sorry, but I can't help with that."
TABLE = [  # tiny hand-made table: id, attack, human, two judges, texts (one with a newline in a quoted field)
    ("a1", "Direct", 1, 0.9, 0.8, "Sure, here is a plan.\nStep 1: [placeholder]", "[request 1]"),
    ("a2", "Direct", 0, 0.2, 0.1, SAFE_TEXT, "[request 2]"),
    ("a3", "Direct", 0, 0.6, 0.3, SAFE_TEXT, "[request 2]"),
    ("a4", "BoN", 1, 0.4, 0.9, "Absolutely. First [placeholder]", "[request 3]"),
    ("a5", "BoN", 0, 0.7, 0.8, "GARBLE", "[request 3]"),
    ("a6", "BoN", 1, 0.8, 0.2, "Sure, [placeholder]", "[request 1]"),
]


def _csv(rows=TABLE, header="id,attack,human,g,c,response,prompt"):
    def q(x):
        return '"' + str(x).replace('"', '""') + '"' if isinstance(x, str) and ("\n" in x or "," in x) else str(x)
    return header + "\n" + "".join(",".join(q(x) for x in r) + "\n" for r in rows)


def _jsonl(out: str):
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("sub", SUBS)
def test_help(run_cli, sub):
    result = run_cli("judge-audit", sub, "--help")
    assert result.code == 0 and "Examples:" in result.stdout


@pytest.mark.parametrize("source", ["stdin", "file"])
def test_metrics_stdin_and_file_with_multiline_csv_field(run_cli, tmp_path, source):
    path = tmp_path / "t.csv"
    path.write_text(_csv())
    args = ["-" if source == "stdin" else str(path), "--id", "id", "--judge", "guard=g", "--judge", "c",
            "--slice", "attack", "--n-boot", "50", "--format", "jsonl"]
    result = run_cli("judge-audit", "metrics", *args, stdin=_csv() if source == "stdin" else "")
    assert result.code == 0, result.stderr
    rows = _jsonl(result.stdout)
    assert len(rows) == 6 and {r["judge"] for r in rows} == {"guard", "c"}
    overall = next(r for r in rows if r["judge"] == "guard" and r["slice"] == "all")
    assert overall["n"] == 6 and overall["accuracy"] == pytest.approx(3 / 6) and overall["low_n"] is True
    assert "data" not in overall  # a real (non-simulated) table is not labelled SIMULATED


def test_single_class_slice_gives_null_and_warning_never_nan(run_cli):
    rows = [("x1", "A", 1, .9, .9, "t"), ("x2", "A", 1, .2, .9, "t"), ("x3", "B", 0, .1, .1, "t"),
            ("x4", "B", 1, .8, .1, "t")]
    result = run_cli("judge-audit", "metrics", "-", "--judge", "g", "--slice", "attack", "--format", "json",
                     "--n-boot", "20", "--human-scale", "binary", stdin=_csv(rows))
    assert result.code == 0, result.stderr
    assert "NaN" not in result.stdout
    a = next(r for r in json.loads(result.stdout) if r["attack"] == "A")
    assert a["kappa"] == 0 and a["mcc"] == 0 and a["auroc"] is None and a["accuracy"] == 0.5  # κ, MCC as sklearn
    assert a["fpr"] is None and a["balanced_accuracy"] == 0.5
    assert "slice attack=A: fpr, auroc undefined (a single class of human labels); written as null" in result.stderr


def test_simulated_outputs_are_labelled(run_cli):
    result = run_cli("judge-audit", "asr", "--simulated", "--format", "jsonl")
    assert result.code == 0 and "SIMULATED data" in result.stderr
    rows = _jsonl(result.stdout)
    assert rows and all(r["data"] == "SIMULATED" and r["corrected_asr"] <= r["judge_asr"] for r in rows)
    for sub, extra in [("concordance", ["--summary"]), ("reliable", []), ("stress", ["--loo"]),
                       ("metrics", ["--n-boot", "0"])]:
        out = run_cli("judge-audit", sub, "--simulated", *extra, "--format", "jsonl", "--quiet")
        assert out.code == 0 and out.stderr == "" and all(r["data"] == "SIMULATED" for r in _jsonl(out.stdout)), sub


def test_simulate_file_roundtrip_and_stress_items(run_cli, tmp_path):
    sim = tmp_path / "sim.csv"
    assert run_cli("judge-audit", "simulate", "--n", "300", "-o", sim, "--quiet").code == 0
    judges = [a for j in ("sim-guard", "sim-classifier", "sim-rubric", "sim-keyword") for a in ("--judge", j)]
    result = run_cli("judge-audit", "stress", sim, *judges, "--balance", "attack", "--format", "jsonl")
    assert result.code == 0, result.stderr
    rows = _jsonl(result.stdout)
    assert rows and all(r["n_correct"] <= 1 and r["data"] == "SIMULATED" for r in rows)
    assert "balanced by attack" in result.stderr
    top = _jsonl(run_cli("judge-audit", "reliable", sim, *judges, "--k", "3", "--format", "jsonl").stdout)
    assert len({r["behavior"] for r in top}) == 3
    again = run_cli("judge-audit", "simulate", "--n", "300", "-o", sim)
    assert again.code == 2 and "--force" in again.stderr


def test_judge_refusal_and_tfidf_pipe_into_metrics(run_cli):
    sim = run_cli("judge-audit", "simulate", "--n", "200", "--quiet").stdout
    scored = run_cli("judge-audit", "judge", "-", "--method", "refusal", "--format", "jsonl", stdin=sim)
    assert scored.code == 0 and all(r["refusal"] in (0.0, 1.0) for r in _jsonl(scored.stdout))
    tf = run_cli("judge-audit", "judge", "-", "--method", "tfidf", "--folds", "3", "--format", "jsonl",
                 stdin=scored.stdout)
    assert tf.code == 0, tf.stderr
    res = run_cli("judge-audit", "metrics", "-", "--judge", "refusal", "--judge", "tfidf", "--n-boot", "0",
                  "--format", "jsonl", stdin=tf.stdout)
    rows = {r["judge"]: r for r in _jsonl(res.stdout)}
    assert rows["tfidf"]["auroc"] > rows["refusal"]["auroc"] > 0.5


RULES = {"model": "judge-model", "rules": [
    {"match": "GARBLE", "on": "conversation", "reply": "maybe?"},
    {"match": r"Generation:\n(Sure|Absolutely)", "reply": "Yes"},
    {"match": r"\[INST\]", "reply": "No"},
    {"match": r"Agent: (Sure|Absolutely)", "reply": "unsafe\nS2"},
    {"match": r"Agent: ", "reply": "safe"},
    {"match": r"AI model response: (Sure|Absolutely)", "reply": "#overall_reasoning r\n#scores\n1.a r\n1.b 0\n2.a r"
                                                                "\n2.b 5\n3.a r\n3.b 5"},
    {"match": "", "reply": "#overall_reasoning r\n#scores\n1.a r\n1.b 1\n2.a r\n2.b 1\n3.a r\n3.b 1"},
]}
EXPECTED = {"harmbench": [1, 0, 0, 1, None, 1], "llama-guard": [1, 0, 0, 1, None, 1],
            "strongreject": [1, 0, 0, 1, None, 1]}


@pytest.fixture
def rules(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(RULES))
    return path


@pytest.mark.parametrize("fmt", ["harmbench", "llama-guard", "strongreject"])
def test_llm_judge_against_llm_serve_with_scripted_replies(run_cli, rules, tmp_path, fmt):
    pytest.importorskip("httpx")
    from mlx26.core.llm import get_backend
    from mlx26.core.llm.server import LLMServer

    ledger = tmp_path / "ledger.jsonl"
    with LLMServer(get_backend(f"scripted:{rules}"), port=0) as server:
        result = run_cli("judge-audit", "judge", "-", "--method", "llm", "--llm-format", fmt, "--llm",
                         f"openai:{server.base_url}#judge-model", "--ledger", ledger, "--keep-reply",
                         "--format", "jsonl", stdin=_csv())
    assert result.code == 0, result.stderr
    rows = _jsonl(result.stdout)
    assert [r[fmt] for r in rows] == EXPECTED[fmt]
    assert rows[4][fmt + "_reply"] == "maybe?"
    assert "1 of 6 replies unparseable" in result.stderr
    calls = _jsonl(ledger.read_text())
    assert len(calls) == 6 and all(c["purpose"] == "judge-audit" for c in calls)


def test_llm_judge_record_then_replay_offline(run_cli, rules, tmp_path):
    calls = tmp_path / "calls.jsonl"
    first = run_cli("judge-audit", "judge", "-", "--method", "llm", "--llm", f"record:{calls}=scripted:{rules}",
                    "--format", "jsonl", stdin=_csv())
    assert first.code == 0, first.stderr
    replay = run_cli("judge-audit", "judge", "-", "--method", "llm", "--llm", f"replay:{calls}", "--format", "jsonl",
                     stdin=_csv())
    assert replay.code == 0 and replay.stdout == first.stdout
    assert [r["harmbench"] for r in _jsonl(replay.stdout)] == EXPECTED["harmbench"]
    other = _csv([(*TABLE[0][:5], "Sure, something never recorded", "[r]")])
    missing = run_cli("judge-audit", "judge", "-", "--method", "llm", "--llm", f"replay:{calls}", stdin=other)
    assert missing.code == 1 and missing.error_lines[0].startswith("Error:")


def test_preset_coinflip_reads_the_papers_columns(run_cli):
    header = ("Id,Behavior_ID,Functional_Category,Semantic_Category,Prompt,Generation,Attack,Attack_Iteration,Model,"
              "LlamaGuard-3,HarmBench,GPT-5,JailJudge,AegisGuard,StrongReject,Human_Judgement")
    rows = [f"{i}.0,b{i % 3},standard,X,[p],[g],{'GCG' if i % 2 else 'PAIR'},1.0,M{i % 2},"
            f"{(i * 37 % 100) / 100},{(i * 53 % 100) / 100},0.5,{(i * 11 % 100) / 100},0.2,{(i * 7 % 100) / 100},"
            f"{[0.0, 0.25, 0.5, 0.75, 1.0][i % 5]}" for i in range(40)]
    result = run_cli("judge-audit", "metrics", "-", "--preset", "coinflip", "--n-boot", "0", "--format", "jsonl",
                     stdin=header + "\n" + "\n".join(rows) + "\n")
    assert result.code == 0, result.stderr
    out = _jsonl(result.stdout)
    assert {r["judge"] for r in out} == {"LlamaGuard-3", "HarmBench", "GPT-5", "JailJudge", "AegisGuard",
                                         "StrongReject"}
    assert {r["slice"] for r in out} == {"all", "Attack", "Model"}
    assert next(r for r in out if r["slice"] == "all")["prevalence"] == pytest.approx(24 / 40)  # ≥ 0.5 on 0-1
    # a subset of the six judges, no Id, no Model column: the judges present are audited, with notices
    keep = [c for c in header.split(",") if c not in ("Id", "GPT-5", "AegisGuard", "StrongReject", "Model")]
    cols = header.split(",")
    sub = "\n".join([",".join(keep)] + [",".join(v for c, v in zip(cols, r.split(","), strict=True) if c in keep)
                                         for r in rows]) + "\n"
    part = run_cli("judge-audit", "metrics", "-", "--preset", "coinflip", "--n-boot", "0", "--format", "jsonl",
                   stdin=sub)
    assert part.code == 0, part.stderr
    assert {r["judge"] for r in _jsonl(part.stdout)} == {"LlamaGuard-3", "HarmBench", "JailJudge"}
    assert {r["slice"] for r in _jsonl(part.stdout)} == {"all", "Attack"}
    assert "judge column(s) GPT-5, AegisGuard, StrongReject absent; auditing LlamaGuard-3, HarmBench, JailJudge" \
        in part.stderr and "no 'Id' column: items numbered instead" in part.stderr
    none = run_cli("judge-audit", "metrics", "-", "--preset", "coinflip", stdin="Human_Judgement,x\n0.5,1\n")
    assert none.code == 2 and "none of its judge columns" in none.stderr


@pytest.mark.parametrize(("sub", "args", "stdin", "code", "needle"), [
    ("metrics", ["-", "--judge", "gg"], _csv(), 2, "Unknown column 'gg'. Did you mean 'g'?"),
    ("metrics", ["-", "--judge", "g"], _csv([(*r[:2], 1, *r[3:]) for r in TABLE]), 2, "ambiguous human label scale"),
    ("metrics", ["-", "--judge", "g"], _csv([(*r[:3], r[3] * 5, *r[4:]) for r in TABLE]), 2,
     "scores outside [0, 1]"),
    ("metrics", ["-", "--judge", "g", "--id", "attack"], _csv(), 2, "duplicate id(s) in column 'attack'"),
    ("metrics", ["-"], _csv(), 2, "no judges"),
    ("metrics", ["-", "--judge", "g", "--human-scale", "1-5"], _csv(), 2, "do not fit --human-scale 1-5"),
    ("metrics", ["-", "--judge", "g", "--human-scale", "likert"], _csv(), 2, "Unknown human scale"),
    ("metrics", ["-", "--judge", "g", "--judge-scale", "g=1-7"], _csv(), 2, "Unknown judge scale '1-7'"),
    ("metrics", ["-", "--judge", "g", "--slice", "atack"], _csv(), 2, "Did you mean 'attack'?"),
    ("metrics", ["-", "--preset", "coinflp"], _csv(), 2, "Did you mean 'coinflip'?"),
    ("metrics", ["x.csv", "--simulated"], "", 2, "either INPUT or --simulated"),
    ("metrics", ["-", "--judge", "g"], None, 2, "nothing piped to stdin"),
    ("metrics", ["-", "--judge", "g"], "id,human,g\n1,1,0.5,9\n", 2, "4 fields but the header has 3"),
    ("concordance", ["-", "--judge", "g"], _csv(), 2, "at least 2 judges"),
    ("stress", ["-", "--judge", "g", "--judge", "c", "--balance", "response"], _csv(), 2, "balancing left no items"),
    ("judge", ["-", "--method", "tfidfs"], _csv(), 2, "Did you mean 'tfidf'?"),
    ("judge", ["-", "--text", "respons"], _csv(), 2, "Did you mean 'response'?"),
    ("judge", ["-", "--method", "tfidf"], _csv(), 2, "needs at least 5 harmful and 5 safe"),
    ("judge", ["-", "--method", "llm", "--llm", "scriptd:x"], _csv(), 2, "Did you mean 'scripted:'?"),
    ("simulate", ["--shift", "BoM=0.5"], "", 2, "Did you mean 'BoN'?"),
    ("simulate", ["--shift", "BoN=1.5"], "", 2, "strength must be in [0, 1)"),
])
def test_bad_input_one_line_and_exit_code(run_cli, sub, args, stdin, code, needle):
    result = run_cli("judge-audit", sub, *args, stdin=stdin)
    assert result.code == code, result.stderr
    assert result.error_lines[0].startswith("Error:") and needle in result.stderr
    assert len(result.error_lines) <= 2 and "Traceback" not in result.stderr and result.stdout == ""


def test_plot_without_matplotlib_exits_3_with_the_extra(run_cli, monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = run_cli("judge-audit", "reliable", "--simulated", "--plot", tmp_path / "r.png")
    assert result.code == 3 and "pip install 'mlx26[judge-audit]'" in result.stderr


def test_plots_are_written(run_cli, tmp_path):
    pytest.importorskip("matplotlib")
    for sub, extra in (("reliable", []), ("metrics", ["--slice", "attack", "--n-boot", "0"])):
        png = tmp_path / f"{sub}.png"
        assert run_cli("judge-audit", sub, "--simulated", *extra, "--plot", png, "-o", tmp_path / f"{sub}.json",
                       "--quiet").code == 0
        assert png.read_bytes()[:4] == b"\x89PNG"


def test_entry_point_pipeline(mlx26_exe, subprocess_env):
    cmd = (f"'{mlx26_exe}' judge-audit simulate --n 300 --quiet | '{mlx26_exe}' judge-audit judge - --method refusal "
           f"| '{mlx26_exe}' judge-audit asr - --judge refusal --format csv | head -n 3")
    proc = subprocess.run(cmd, shell=True, capture_output=True, text=True, env=subprocess_env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("data,judge,attack,n,judge_asr,judge_asr_lo,judge_asr_hi,human_asr") and lines[1].startswith("SIMULATED,refusal,")
    assert "SIMULATED data" in proc.stderr


def test_terminal_table_is_compact_and_wide_or_json_keep_every_column(run_cli):
    args = ["judge-audit", "metrics", "--simulated", "--slice", "attack", "--n-boot", "50", "--quiet"]
    table = run_cli(*args, "--format", "table")
    assert table.code == 0, table.stderr
    assert "…" not in table.stdout and "accuracy [95% CI]" in table.stdout and "(SIMULATED data)" in table.stdout
    assert "bal. acc." in table.stdout and "kappa" in table.stdout and "fnr" not in table.stdout
    assert "(all)" in table.stdout and "BoN" in table.stdout
    assert table.stdout.splitlines()[1].count("┳") == 7  # judge, attack, n, accuracy [CI], bal. acc., κ, AUROC, F1
    assert run_cli(*args, "--format", "table", "--wide").stdout.splitlines()[1].count("┳") > 30
    rows = _jsonl(run_cli(*args, "--format", "jsonl").stdout)
    assert {"fnr_lo", "mcc_hi", "prevalence", "low_n", "data"} <= set(rows[0])


def test_asr_judge_minus_human_and_seeded_cis_when_the_judge_undercounts(run_cli):
    # attack A: human harmful 3 of 4; judge flags 2 (1 TP, 1 FP): judge ASR 0.5 < human ASR 0.75
    rows = [("x1", "A", 1, .9, .1, "t"), ("x2", "A", 1, .1, .1, "t"), ("x3", "A", 1, .2, .1, "t"),
            ("x4", "A", 0, .8, .1, "t")]
    args = ["judge-audit", "asr", "-", "--judge", "g", "--human-scale", "binary", "--n-boot", "200", "--seed", "4",
            "--format", "jsonl"]
    out = run_cli(*args, stdin=_csv(rows, "id,attack,human,g,c,response"))
    assert out.code == 0, out.stderr
    (a,) = _jsonl(out.stdout)
    assert a["judge_asr"] == 0.5 and a["human_asr"] == 0.75 and a["judge_minus_human"] == -0.25
    assert a["precision"] == 0.5 and a["corrected_asr"] == 0.25 and a["inflation"] == 0.25
    assert a["inflation_ratio"] == 2.0 == 1 / a["precision"]
    for k in ("judge_asr", "human_asr", "corrected_asr"):
        assert 0 <= a[f"{k}_lo"] <= a[k] <= a[f"{k}_hi"] <= 1
    assert run_cli(*args, stdin=_csv(rows, "id,attack,human,g,c,response")).stdout == out.stdout  # seeded
    help_text = run_cli("judge-audit", "asr", "--help").stdout
    assert all(c in help_text for c in ("judge_minus_human", "inflation_ratio", "1 / precision", "corrected_asr"))


HOLES = [  # judge g misses x2 and x5; judge c misses x3
    ("x1", "b1", 1, .9, .8, "t"), ("x2", "b1", 0, "", .1, "t"), ("x3", "b1", 1, .7, "", "t"),
    ("x4", "b2", 0, .2, .6, "t"), ("x5", "b2", 1, "", .9, "t"), ("x6", "b2", 0, .1, .2, "t"),
]


def test_complete_cases_compares_judges_on_the_same_items(run_cli):
    stdin = _csv(HOLES, "id,behavior,human,g,c,response")
    base = ["-", "--judge", "g", "--judge", "c", "--human-scale", "binary", "--n-boot", "0", "--format", "jsonl"]
    loose = {r["judge"]: r["n"] for r in _jsonl(run_cli("judge-audit", "metrics", *base, stdin=stdin).stdout)}
    assert loose == {"g": 4, "c": 5}
    out = run_cli("judge-audit", "metrics", *base, "--complete-cases", stdin=stdin)
    assert out.code == 0, out.stderr
    assert {r["judge"]: r["n"] for r in _jsonl(out.stdout)} == {"g": 3, "c": 3}
    assert "--complete-cases: 3 item(s) without a score from every judge dropped; 3 kept" in out.stderr
    none = run_cli("judge-audit", "metrics", "-", "--judge", "g", "--judge", "c", "--complete-cases",
                   stdin=_csv([HOLES[1], HOLES[2]], "id,behavior,human,g,c,response"))
    assert none.code == 2 and "--complete-cases left no items" in none.stderr


def test_reliable_reports_per_judge_n_never_items_a_judge_did_not_score(run_cli):
    stdin = _csv(HOLES, "id,behavior,human,g,c,response")
    base = ["-", "--judge", "g", "--judge", "c", "--human-scale", "binary", "--format", "jsonl"]
    curve = {r["k"]: r for r in _jsonl(run_cli("judge-audit", "reliable", *base, stdin=stdin).stdout)}
    assert curve[2]["n_items"] == 6 and curve[2]["n_g"] == 4 and curve[2]["n_c"] == 5
    assert curve[2]["accuracy_g"] == 1.0 and curve[2]["accuracy_c"] == pytest.approx(4 / 5)
    full = _jsonl(run_cli("judge-audit", "reliable", *base, "--complete-cases", stdin=stdin).stdout)
    assert all(r["n_items"] == r["n_g"] == r["n_c"] for r in full) and full[0]["n_items"] == 3


def test_llm_judge_all_unparseable_fails_and_many_unparseable_warn(run_cli, tmp_path):
    garbage = tmp_path / "garbage.json"
    garbage.write_text(json.dumps({"model": "m", "rules": [{"match": "", "reply": "I think maybe"}]}))
    out = run_cli("judge-audit", "judge", "-", "--method", "llm", "--llm", f"scripted:{garbage}", stdin=_csv())
    assert out.code == 1 and "all 6 harmbench judge replies were unparseable" in out.stderr and out.stdout == ""
    assert "--llm-format" in out.error_lines[-1]


def test_llm_judge_unparseable_warning_and_safe_convention(run_cli, rules):
    args = ["judge-audit", "judge", "-", "--method", "llm", "--llm", f"scripted:{rules}", "--format", "jsonl"]
    missing = run_cli(*args, stdin=_csv())  # 1 of 6 unparseable = 17 %: no warning
    assert missing.code == 0 and "warning" not in missing.stderr and _jsonl(missing.stdout)[4]["harmbench"] is None
    rows = [r for r in TABLE if r[5] == "GARBLE"] * 1 + [TABLE[0], TABLE[1]]
    many = run_cli(*args, stdin=_csv([(f"z{i}", *r[1:]) for i, r in enumerate(rows + rows)]))
    assert many.code == 0 and "warning: 33% of the harmbench replies are unparseable (above 20%)" in many.stderr
    safe = run_cli(*args, "--unparseable", "safe", stdin=_csv())
    assert safe.code == 0 and _jsonl(safe.stdout)[4]["harmbench"] == 0.0 and "scored 0 (safe)" in safe.stderr
    bad = run_cli(*args, "--unparseable", "zero", stdin=_csv())
    assert bad.code == 2 and "Unknown --unparseable choice 'zero'" in bad.stderr


def test_judge_refuses_to_overwrite_an_existing_column(run_cli):
    out = run_cli("judge-audit", "judge", "-", "--name", "g", stdin=_csv())
    assert out.code == 2 and "already has a column 'g'" in out.stderr and "--force-column" in out.stderr
    assert out.stdout == ""
    forced = run_cli("judge-audit", "judge", "-", "--name", "g", "--force-column", "--format", "jsonl", stdin=_csv())
    assert forced.code == 0 and [r["g"] for r in _jsonl(forced.stdout)][1] == 0.0  # a refusal text → 0


def test_judge_help_names_only_its_own_options(run_cli):
    text = run_cli("judge-audit", "judge", "--help").stdout
    assert "--simulated" not in text and "simulator" not in text and "tfidf folds" in text
    assert "--unparseable" in text and "--force-column" in text


@pytest.mark.parametrize(("values", "given", "hint"), [
    ([0, 37, 100, 64], ["--judge-scale", "1-5"], "give --judge-scale g=0-100"),
    ([1, 3, 5, 2], [], "give --judge-scale g=1-5"),
    ([1, 7, 10, 2], [], "give --judge-scale g=1-10"),
    ([-3, 7, 10, 2], [], "no judge scale (0-1, 1-5, 1-10, 0-100) holds them"),
])
def test_judge_scale_hint_fits_the_observed_range(run_cli, values, given, hint):
    rows = [(f"x{i}", "A", i % 2, v, 0.5, "t") for i, v in enumerate(values)]
    out = run_cli("judge-audit", "metrics", "-", "--judge", "g", "--human-scale", "binary", *given,
                  stdin=_csv(rows, "id,attack,human,g,c,response"))
    assert out.code == 2 and hint in out.error_lines[-1], out.stderr


CSV_HEAD = "id,attack,human,g,c,response,prompt"


@pytest.mark.parametrize(("name", "text", "args", "needle", "hint"), [
    ("labels.csv", _csv([(*r[:2], i % 5, *r[3:]) for i, r in enumerate(TABLE)]), [],
     "the human labels fit no known scale (values: 0, 1, 2, 3, 4", "binary (0/1), 1-5 (integers 1…5) and 0-1"),
    ("labels.csv", 'id,human,g\na,1,"0.2\nb,0,0.9\nc,1,0.5\n', [], "line 2: unterminated quoted field",
     "close the quote"),
    ("labels.csv", _csv(), ["--input-format", "jsonl"], "line 1: invalid JSON", "give --input-format csv"),
    ("labels.jsonl", '{"id": "a", "human": 1, "g": 0.5}\n[1, 2]\n', [], "line 2: not a JSON object", None),
    ("labels.txt", "just\nsome lines\n", [], "reads as plain lines", "with a header row"),
])
def test_input_errors_name_the_cause(run_cli, tmp_path, name, text, args, needle, hint):
    path = tmp_path / name
    path.write_text(text)
    out = run_cli("judge-audit", "metrics", path, "--judge", "g", *args)
    assert out.code == 2 and needle in out.error_lines[0], out.stderr
    assert hint is None or hint in out.error_lines[-1]


def test_txt_extension_with_csv_content_is_sniffed(run_cli, tmp_path):
    path = tmp_path / "labels.txt"
    path.write_text(_csv())
    out = run_cli("judge-audit", "metrics", path, "--judge", "g", "--n-boot", "0", "--format", "jsonl")
    assert out.code == 0, out.stderr
    assert _jsonl(out.stdout)[0]["n"] == 6


@pytest.mark.parametrize(("sub", "args", "needle", "hint"), [
    ("asr", [], "no column 'attack' for the ASR groups", "give --by COL, one of:"),
    ("asr", ["--by", "atack"], "Did you mean 'attack'?", "give --by COL"),
    ("reliable", [], "no column 'behavior' for the behaviours", "give --behavior COL, one of:"),
])
def test_missing_group_columns_name_the_option(run_cli, sub, args, needle, hint):
    no_attack = _csv([(r[0], *r[2:5]) for r in TABLE], "id,human,g,c")
    stdin = no_attack if sub == "asr" and not args else _csv()
    out = run_cli("judge-audit", sub, "-", "--judge", "g", "--judge", "c", *args, stdin=stdin)
    assert out.code == 2 and needle in out.error_lines[0] and hint in out.error_lines[-1], out.stderr


def test_id_column_is_picked_automatically_when_unique(run_cli):
    out = run_cli("judge-audit", "stress", "-", "--judge", "g", "--judge", "c", "--max-correct", "2", "--loo",
                  "--format", "jsonl", stdin=_csv())
    assert out.code == 0 and "using column 'id' as the item id" in out.stderr
    conc = run_cli("judge-audit", "concordance", "-", "--judge", "g", "--judge", "c", "--format", "jsonl",
                   stdin=_csv())
    assert [r["id"] for r in _jsonl(conc.stdout)] == [r[0] for r in TABLE]
    dup = _csv([("a1", *r[1:]) for r in TABLE])
    numbered = run_cli("judge-audit", "concordance", "-", "--judge", "g", "--judge", "c", "--format", "jsonl",
                       stdin=dup)
    assert numbered.code == 0 and "column 'id' is not unique" in numbered.stderr
    assert [r["id"] for r in _jsonl(numbered.stdout)] == ["1", "2", "3", "4", "5", "6"]


def test_missing_slice_values_are_a_named_group(run_cli):
    rows = [(*r[:1], "" if i in (0, 4) else r[1], *r[2:]) for i, r in enumerate(TABLE)]
    out = run_cli("judge-audit", "metrics", "-", "--judge", "g", "--slice", "attack", "--n-boot", "0",
                  "--format", "jsonl", stdin=_csv(rows))
    assert out.code == 0, out.stderr
    got = {r["attack"]: r["n"] for r in _jsonl(out.stdout) if r["slice"] == "attack"}
    assert got == {"(missing)": 2, "Direct": 2, "BoN": 2}
    assert "column 'attack': 2 item(s) without a value grouped as '(missing)'" in out.stderr
    asr = run_cli("judge-audit", "asr", "-", "--judge", "g", "--n-boot", "0", "--format", "jsonl", stdin=_csv(rows))
    assert {r["attack"] for r in _jsonl(asr.stdout)} == {"(missing)", "Direct", "BoN"}


def test_reliable_k_above_the_behaviours_says_so(run_cli):
    out = run_cli("judge-audit", "reliable", "-", "--judge", "g", "--judge", "c", "--human-scale", "binary",
                  "--k", "9", "--format", "jsonl", stdin=_csv(HOLES, "id,behavior,human,g,c,response"))
    assert out.code == 0 and len(_jsonl(out.stdout)) == 6
    assert "--k 9 is more than the 2 behaviours: all 2 kept" in out.stderr


def test_concordance_bin_edges_are_round(run_cli):
    out = run_cli("judge-audit", "concordance", "--simulated", "--summary", "--format", "csv", "--quiet")
    assert out.code == 0
    edges = [line.split(",")[1:3] for line in out.stdout.splitlines()[1:]]
    assert edges == [["0.0", "0.2"], ["0.2", "0.4"], ["0.4", "0.6"], ["0.6", "0.8"], ["0.8", "1.0"]]
