"""``mlx26 vuln-games``: help, happy paths (in-process and through the entry point), streams, error paths."""

import json
import subprocess


def jsonl(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_help(run_cli):
    r = run_cli("vuln-games", "--help")
    assert r.code == 0 and all(c in r.stdout for c in ("list", "play", "train", "persist", "audit", "threshold"))


def test_list(run_cli):
    r = run_cli("vuln-games", "list", "--format", "jsonl")
    assert r.code == 0 and [x["game"] for x in jsonl(r.stdout)] == ["compliance", "self-grading", "proxy", "tampering"]


def test_train_streams_step_er_itp(run_cli):
    r = run_cli("vuln-games", "train", "--game", "tampering", "--steps", "200", "--log-every", "20")
    recs = jsonl(r.stdout)
    assert r.code == 0 and [x["step"] for x in recs] == list(range(0, 201, 20))
    assert all({"step", "er", "itp"} <= set(x) for x in recs) and recs[-1]["er"] >= 0.9
    assert "SYNTHETIC" in r.stderr


def test_train_secure_and_plot(run_cli, tmp_path):
    png = tmp_path / "c.png"
    r = run_cli("vuln-games", "train", "--game", "tampering", "--variant", "secure", "--algo", "reinforce",
                "--steps", "200", "--plot", png, "-q")
    assert r.code == 0 and jsonl(r.stdout)[-1]["er"] <= 0.05 and png.read_bytes()[:4] == b"\x89PNG"
    again = run_cli("vuln-games", "train", "--steps", "1", "--plot", png, "-q")
    assert again.code == 2 and "existing file" in again.stderr


def test_play_pipes_into_audit(run_cli):
    play = run_cli("vuln-games", "play", "--game", "compliance", "--context", "3", "--format", "jsonl")
    assert play.code == 0
    audit = run_cli("vuln-games", "audit", "-", "--game", "compliance", "--format", "json", stdin=play.stdout)
    s = json.loads(audit.stdout)
    assert audit.code == 0 and s["records"] == 2 and s["exploits"] == 1


def test_audit_file_records_and_errors(run_cli, tmp_path):
    f = tmp_path / "t.jsonl"
    f.write_text('{"response": "<answer>1</answer>", "answer": "1"}\n{bad\n', encoding="utf-8")
    bad = run_cli("vuln-games", "audit", f, "--game", "tampering")
    assert bad.code == 2 and "line 2: invalid JSON" in bad.stderr and "Traceback" not in bad.stderr
    ok = run_cli("vuln-games", "audit", f, "--game", "tampering", "--skip-bad", "--records", "--format", "jsonl")
    assert ok.code == 0 and jsonl(ok.stdout)[0]["reward"] == 1.0
    p = run_cli("vuln-games", "audit", f, "--game", "self-grading", "--audit-p", "1.5")
    assert p.code == 2 and "[0, 1]" in p.stderr
    miss = run_cli("vuln-games", "audit", f, "--game", "compliance")
    assert miss.code == 2 and "'prompt'" in miss.stderr and "'harmful'" in miss.stderr
    out = tmp_path / "s.json"
    out.write_text("keep")
    clash = run_cli("vuln-games", "audit", f, "--game", "tampering", "--skip-bad", "-o", out)
    assert clash.code == 2 and out.read_text() == "keep"


def test_unknown_names_exit_2(run_cli):
    for args in (("train", "--game", "tamper"), ("train", "--algo", "ppo"), ("play", "--variant", "safe"),
                 ("play", "--game", "tampering", "--action", "nope"), ("play", "--context", "99")):
        r = run_cli("vuln-games", *args)
        assert r.code == 2 and r.stderr.startswith("Error:"), (args, r.stderr)


def test_persist_summary(run_cli):
    r = run_cli("vuln-games", "persist", "--teacher-steps", "200", "--steps", "300")
    recs = jsonl(r.stdout)
    summary = recs[-1]
    assert r.code == 0 and summary["phase"] == "summary"
    assert {x["policy"] for x in recs[:-1]} == {"rl-teacher", "rl-native", "sft-student"}
    # the default compares at equal starting ER: the student is distilled until its ER matches the teacher's
    assert summary["sft_mode"] == "match-er" and summary["er_matched"]
    assert abs(summary["rl-native"]["er_start"] - summary["sft-student"]["er_start"]) <= 0.005
    assert summary["rl-native"]["er_end"] < 0.5
    assert "None" not in r.stderr and "start ER" in r.stderr


def test_persist_fixed_sft_steps_is_the_old_protocol(run_cli):
    r = run_cli("vuln-games", "persist", "--sft-steps", "100", "-q")
    s = jsonl(r.stdout)[-1]
    assert r.code == 0 and s["sft_mode"] == "fixed" and s["sft_steps"] == 100
    # under-fitted: the student starts well below the teacher's ER (the artifact of the old default)
    assert s["sft-student"]["er_start"] < s["rl-native"]["er_start"] - 0.01


def test_threshold_command(run_cli):
    r = run_cli("vuln-games", "threshold", "--grid", "0.06,0.1,0.14,0.2,0.3", "--seeds", "1", "--format", "json")
    res = json.loads(r.stdout)
    assert r.code == 0 and 0.1 <= res["thresholds"][0] <= 0.2
    bad = run_cli("vuln-games", "threshold", "--grid", "0.3,0.1")
    assert bad.code == 2


def test_entry_point_subprocess(mlx26_exe, subprocess_env):
    proc = subprocess.run([mlx26_exe, "vuln-games", "train", "--game", "compliance", "--steps", "20",
                           "--log-every", "10", "-q"], capture_output=True, text=True, env=subprocess_env, timeout=120)
    assert proc.returncode == 0 and len(jsonl(proc.stdout)) == 3 and proc.stderr == ""
