"""``mlx26 wifi-pose`` through the CLI: real captures, the SYNTHETIC pipeline, every bad-input case, exit 3
for a missing extra, and one subprocess run through the installed entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("csiread")
pytest.importorskip("pywt")
pytest.importorskip("torch")

from tests._data import shared_data  # noqa: E402

INTEL = "intel5300_sample_0x5_64_3000.dat"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from mlx26.cli.main import main

    d = tmp_path_factory.mktemp("wifi")
    assert main(["wifi-pose", "synth", str(d / "c.npz"), "--sequences", "4", "--frames", "4", "-q",
                 "-o", str(d / "s.json")]) == 0
    assert main(["wifi-pose", "train", str(d / "c.npz"), "--save", str(d / "m.pt"), "--steps", "2", "--batch", "2",
                 "--window", "2", "-q", "-o", str(d / "t.json")]) == 0
    return d


def test_help(run_cli):
    r = run_cli("wifi-pose", "--help")
    assert r.code == 0
    for cmd in ("read", "sanitize", "synth", "train", "eval", "export", "bench"):
        assert cmd in r.stdout


def test_read_real_capture_and_npz(run_cli, tmp_path):
    path = shared_data("csi") / INTEL
    r = run_cli("wifi-pose", "read", path, "--format", "json", "-o", tmp_path / "c.npz")
    out = json.loads(r.stdout)
    assert r.code == 0 and out["packets"] == out["packets_walked"] == out["packets_csiread"]
    assert (out["links"], out["antennas"], out["subcarriers"]) == (1, 3, 30)
    with np.load(tmp_path / "c.npz") as f:
        assert f["csi"].shape == (out["packets"], 1, 3, 30) and len(f["time_s"]) == out["packets"]
    assert out["rate_hz"] == pytest.approx(out["packets"] / out["duration_s"], rel=0.01)


def test_truncated_capture_warns_and_strict_fails(run_cli, tmp_path):
    src = (shared_data("csi") / "atheros_ath_csi_1.dat").read_bytes()
    (tmp_path / "t.dat").write_bytes(src[:-100])
    r = run_cli("wifi-pose", "read", tmp_path / "t.dat", "--chip", "atheros", "--format", "json")
    out = json.loads(r.stdout)
    assert r.code == 0 and out["truncated"] and out["first_bad_offset"] > 0
    assert f"{out['packets_walked']} packets parsed, first bad record at byte offset {out['first_bad_offset']}" in r.stderr
    r = run_cli("wifi-pose", "read", tmp_path / "t.dat", "--chip", "atheros", "--strict")
    assert r.code == 2 and "truncated" in r.stderr


def test_sanitize_real_capture(run_cli):
    r = run_cli("wifi-pose", "sanitize", shared_data("csi") / INTEL, "--format", "json")
    out = json.loads(r.stdout)
    assert r.code == 0 and out["phase_std_sanitized_strongest_antenna"] < 0.06 < out["phase_std_raw_median"]


def test_synth_folder_train_eval_export(run_cli, trained, tmp_path):
    r = run_cli("wifi-pose", "synth", tmp_path / "piw3d", "--sequences", "2", "--frames", "2", "--format", "json")
    assert r.code == 0 and json.loads(r.stdout)["data"] == "SYNTHETIC"
    assert len(list((tmp_path / "piw3d" / "csi").glob("*.mat"))) == 4
    t = json.loads((trained / "t.json").read_text())
    assert t["data"] == "SYNTHETIC" and t["steps"] == 2 and t["memory"] and t["test_mpjpe_mm"] > 0
    r = run_cli("wifi-pose", "eval", tmp_path / "piw3d", "--model", trained / "m.pt", "--format", "json")
    out = json.loads(r.stdout)
    assert r.code == 0, r.stderr
    assert out["data"] == "SYNTHETIC" and out["clips"] == 4 and out["mpjpe_mm"] <= out["mpjpe_greedy_mm"] + 1e-6
    pytest.importorskip("onnxruntime")
    r = run_cli("wifi-pose", "export", "--model", trained / "m.pt", "--onnx", tmp_path / "m.onnx", "--frames", "3",
                "--format", "json", "-q")
    out = json.loads(r.stdout)
    assert r.code == 0 and out["max_abs_diff"] < 1e-4 and (tmp_path / "m.onnx").exists()


def test_eval_png(run_cli, trained, tmp_path):
    pytest.importorskip("matplotlib")
    r = run_cli("wifi-pose", "eval", trained / "c.npz", "--model", trained / "m.pt", "--png", tmp_path / "s.png",
                "--no-memory", "--format", "json")
    assert r.code == 0 and (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG" and not json.loads(r.stdout)["memory"]


@pytest.mark.slow  # three trainings, an ONNX export and two child processes for peak memory
def test_bench_tiny(run_cli):
    r = run_cli("wifi-pose", "bench", "--steps", "1", "--sequences", "4", "--frames", "4", "--window", "2",
                "--batch", "2", "--format", "jsonl", "-q")
    assert r.code == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["model"] for x in rows] == ["transformer (PiW3D-style)", "wifi-mamba", "wifi-mamba, no memory",
                                          "mean pose"]
    assert all(x["data"] == "SYNTHETIC" for x in rows) and rows[1]["params_ratio_vs_transformer"] < 0.6


def _mat(path, arr):
    import scipy.io

    (path / "csi").mkdir(parents=True)
    scipy.io.savemat(str(path / "csi" / "a_0001.mat"), {"csi_out": arr})
    return str(path)


@pytest.mark.parametrize("case, args, code, needle", [
    ("chip", ["read", "{intel}", "--chip", "intl5300"], 2, "Did you mean 'intel5300'"),
    ("missing", ["read", "{tmp}/nope.dat"], 2, "capture not found"),
    ("notcsi", ["read", "{txt}"], 2, "no Intel 5300 CSI"),
    ("arch", ["train", "{npz}", "--save", "{tmp}/m.pt", "--arch", "mamaba"], 2, "Did you mean 'mamba'"),
    ("layout", ["train", "{npz}", "--save", "{tmp}/m.pt", "--layout", "link-sub-pkt"], 2, "must name each of"),
    ("subcarriers", ["train", "{mat56}", "--save", "{tmp}/m.pt", "--subcarriers", "30"], 2,
     "56 subcarriers on axis 2 ('sub' of --layout link-ant-sub-pkt)"),
    ("antennas", ["train", "{mat56}", "--save", "{tmp}/m.pt", "--layout", "ant-link-sub-pkt", "--antennas", "2"], 2,
     "3 antennas on axis 0 ('ant' of --layout ant-link-sub-pkt)"),
    ("npz", ["eval", "{txt}", "--model", "{tmp}/m.pt"], 2, "not a readable NPZ"),
    ("model", ["eval", "{npz}", "--model", "{txt}"], 2, "not an mlx26 wifi-pose checkpoint"),
    ("exists", ["synth", "{txt}"], 2, "exists"),
    ("stdin", ["eval", "-", "--model", "{tmp}/m.pt"], 2, "reads files, not stdin"),
    ("folder", ["read", "{tmp}"], 2, "is a folder"),
    ("lr", ["train", "{npz}", "--save", "{tmp}/m.pt", "--lr", "-1"], 2, "--lr must be a positive number"),
    ("lrnan", ["train", "{npz}", "--save", "{tmp}/m.pt", "--lr", "nan"], 2, "--lr must be a positive number"),
    ("snrnan", ["synth", "{tmp}/s.npz", "--snr", "nan"], 2, "--snr"),
    ("snrbig", ["synth", "{tmp}/s.npz", "--snr", "1e9"], 2, "--snr"),
])
def test_bad_input(run_cli, tmp_path, case, args, code, needle):
    from mlx26.core.wifi_pose import io, synth

    (tmp_path / "x.txt").write_text("not a capture\n")
    io.save_clips(synth.generate(sequences=2, frames=2, seed=1), tmp_path / "c.npz")
    paths = {"tmp": str(tmp_path), "txt": str(tmp_path / "x.txt"), "npz": str(tmp_path / "c.npz"),
             "intel": str(shared_data("csi") / INTEL), "mat56": _mat(tmp_path / "m56", np.ones((3, 3, 56, 20), complex))}
    r = run_cli("wifi-pose", *[a.format(**paths) for a in args])
    assert r.code == code, (r.code, r.stderr)
    assert needle in r.stderr and r.error_lines[0].startswith("Error:") and len(r.error_lines) <= 2, r.stderr


def test_nan_clips_and_mm_keypoints_reported_by_the_cli(run_cli, trained, tmp_path):
    from mlx26.core.wifi_pose import io

    c = io.load_clips(trained / "c.npz")
    c.csi[0, 0, 0, 0, 0] = np.nan
    io.save_clips(io.Clips(c.csi, c.keypoints * 1000, c.seq, c.frame, c.subcarriers, True), tmp_path / "bad.npz")
    r = run_cli("wifi-pose", "eval", tmp_path / "bad.npz", "--model", trained / "m.pt", "--format", "json")
    assert r.code == 0 and json.loads(r.stdout)["clips"] == len(c.csi) - 1
    assert "dropped 1 clips with NaN/Inf CSI" in r.stderr and "millimetres" in r.stderr


def test_missing_extra_exits_3(run_cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "csiread", None)
    r = run_cli("wifi-pose", "read", shared_data("csi") / INTEL)
    assert r.code == 3 and "mlx26[wifi]" in r.stderr


def test_subprocess_entry_point(mlx26_exe, subprocess_env):
    proc = subprocess.run([mlx26_exe, "wifi-pose", "read", str(shared_data("csi") / "atheros_ath_csi_1.dat"),
                           "--chip", "atheros", "--format", "json", "-q"], capture_output=True, text=True,
                          env=subprocess_env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["packets"] == out["packets_walked"] and out["channel_mhz"] == 2437.0
