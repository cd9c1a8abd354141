"""CSI I/O and sanitisation on the real shared captures (csiread vs an independent record walk, phase std)
and on SYNTHETIC data (timing slope recovery, layouts, bad inputs)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("csiread")
pytest.importorskip("pywt")

from mlx26.core.common.errors import InputError  # noqa: E402
from mlx26.core.wifi_pose import io, synth  # noqa: E402
from mlx26.core.wifi_pose import sanitize as S  # noqa: E402

from tests._data import shared_data  # noqa: E402

FILES = [("intel5300_sample_0x5_64_3000.dat", "intel5300"), ("intel5300_sample_0x1_ap.dat", "intel5300"),
         ("atheros_ath_csi_1.dat", "atheros")]


def _record_ends(path, chip):
    """Byte offsets where complete records end (a plain length walk, written here independently)."""
    buf, off, ends = open(path, "rb").read(), 0, []
    while off + 2 <= len(buf):
        size = int.from_bytes(buf[off:off + 2], "big" if chip == "intel5300" else "little")
        if off + 2 + size > len(buf):
            break
        off += 2 + size
        ends.append((off, chip != "intel5300" or buf[off - size] == 0xBB))
    return ends


@pytest.mark.parametrize("name, chip", FILES)
def test_read_parses_every_packet_of_the_real_captures(name, chip):
    path = shared_data("csi") / name
    cap = io.read_capture(path, chip)
    ends = _record_ends(path, chip)
    assert ends[-1][0] == path.stat().st_size  # the walk consumes the whole file
    assert cap.parsed == cap.walked == sum(is_csi for _, is_csi in ends) == len(cap.csi) > 0
    assert cap.first_bad_offset is None and np.isfinite(cap.csi).all()
    assert cap.csi.shape[3] == (30 if chip == "intel5300" else 56)


@pytest.mark.parametrize("name, chip", [FILES[1], FILES[2]])
def test_truncated_capture_reports_packets_and_first_bad_offset(tmp_path, name, chip):
    src = shared_data("csi") / name
    ends = _record_ends(src, chip)
    cut = ends[len(ends) // 2][0] + 37  # mid-record
    (tmp_path / "t.dat").write_bytes(src.read_bytes()[:cut])
    cap = io.read_capture(tmp_path / "t.dat", chip)
    complete = [e for e in ends if e[0] <= cut]
    assert cap.first_bad_offset == complete[-1][0]
    assert cap.parsed == cap.walked == sum(is_csi for _, is_csi in complete)


def test_sanitisation_of_the_intel_capture():
    cap = io.read_capture(shared_data("csi") / FILES[0][0], "intel5300")
    rep = S.capture_report(cap.csi, cap.subcarriers)
    assert rep["phase_std_raw_median"] > 1.5  # raw phase is near uniform on (−π, π]
    assert rep["phase_std_sanitized_strongest_antenna"] < 0.06
    plain = S.capture_report(cap.csi, cap.subcarriers, weighted=False)
    assert rep["phase_std_sanitized_strongest_antenna"] < plain["phase_std_sanitized_strongest_antenna"]


def test_injected_timing_slope_is_recovered_within_one_percent():
    rng = np.random.default_rng(0)
    k = np.array(synth.INTEL5300_SUBCARRIERS, float)
    tx, rx = synth.arrays()
    static = synth._static_paths(tx, rx, rng)
    joints = synth.pose(np.array([2.0, 1.5]), 0.3, 0.0)[None]
    h = synth.channel(joints, tx, rx, static, synth.FC + k * synth.SUBCARRIER_SPACING_HZ, 3.0)
    clean = S.sanitize_phase(h, k).slope
    for slope in (-0.12, -0.03, 0.05, 0.1):
        got = S.sanitize_phase(h * np.exp(1j * (slope * k + 1.3)), k).slope
        assert np.abs((got - clean) / slope - 1).max() < 0.01
    x, true = synth.impair(np.broadcast_to(h, (50, *h.shape)), rng, snr_db=60, sto_ns=40, k=k)
    est = S.sanitize_phase(x, k).slope - clean
    assert np.abs(est - true).max() < 0.01 * np.abs(true).max()


def test_wavelet_denoising_thresholds_for_real():
    rng = np.random.default_rng(1)
    t = np.linspace(0, 1, 256)
    clean = np.sin(2 * np.pi * 3 * t) + 2
    noisy = clean + rng.normal(0, 0.2, t.size)
    den = S.denoise_amplitude(noisy)
    assert np.mean((den - clean) ** 2) < 0.2 * np.mean((noisy - clean) ** 2)
    import pywt

    w = pywt.Wavelet("db4")  # PiW3D's wavedec → waverec without a threshold is the identity
    assert np.allclose(pywt.waverec(pywt.wavedec(noisy, w), w)[: t.size], noisy)


def test_clean_packets_drops_nan_and_zero():
    x = np.ones((6, 3, 30), np.complex64)
    x[1, 0, 0] = np.nan
    x[4] = 0
    kept, n_nan, n_zero = S.clean_packets(x)
    assert (len(kept), n_nan, n_zero) == (4, 1, 1)


def test_layout_axis_errors_name_axis_and_layout():
    arr = np.zeros((3, 3, 56, 20), complex)
    with pytest.raises(InputError, match=r"56 subcarriers on axis 2 \('sub' of --layout link-ant-sub-pkt\)"):
        io.to_canonical(arr, "link-ant-sub-pkt", {"sub": 30}, "x.mat")
    with pytest.raises(InputError, match=r"2 antennas on axis 0 \('ant' of --layout ant-link-sub-pkt\)"):
        io.to_canonical(np.zeros((2, 3, 30, 20)), "ant-link-sub-pkt", {"ant": 3}, "x.mat")
    out = io.to_canonical(np.zeros((20, 30, 3, 2)), "pkt-sub-ant-link", {"ant": 3}, "x.mat")
    assert out.shape == (2, 3, 30, 20)
    with pytest.raises(InputError, match="must name each of"):
        io.parse_layout("link-ant-sub")


def test_piw3d_roundtrip_v5_and_v73(tmp_path):
    h5py = pytest.importorskip("h5py")
    clips = synth.generate(sequences=2, frames=3, seed=3)
    io.write_piw3d(clips, tmp_path / "d")
    back = io.load_piw3d(tmp_path / "d")
    assert back.synthetic and np.allclose(back.csi, clips.csi, atol=1e-6)
    assert np.array_equal(np.isnan(back.keypoints), np.isnan(clips.keypoints[:, :back.keypoints.shape[1]]))
    # MATLAB v7.3: HDF5, column-major (axes reversed), complex as a (real, imag) compound
    name = sorted((tmp_path / "d" / "csi").glob("*.mat"))[0]
    arr = io.read_mat_csi(name)
    comp = np.zeros(arr.shape[::-1], dtype=[("real", "<f8"), ("imag", "<f8")])
    comp["real"], comp["imag"] = arr.real.T, arr.imag.T
    v73 = tmp_path / "v73.mat"
    with h5py.File(v73, "w", userblock_size=512) as f:
        f["csi_out"] = comp
    with open(v73, "r+b") as f:  # MATLAB's 128-byte header in the user block (what scipy.io rejects as v7.3)
        f.write(b"MATLAB 7.3 MAT-file, written by a test".ljust(116) + bytes(8) + b"\x00\x02IM")
    import scipy.io

    with pytest.raises(NotImplementedError):
        scipy.io.loadmat(str(v73))
    assert np.allclose(io.read_mat_csi(v73), arr)


def test_keypoints_in_mm_are_converted_with_a_notice(tmp_path):
    clips = synth.generate(sequences=2, frames=2, seed=4)
    mm = io.Clips(clips.csi, clips.keypoints * 1000, clips.seq, clips.frame, clips.subcarriers, True)
    io.save_clips(mm, tmp_path / "mm.npz")
    back = io.load_clips(tmp_path / "mm.npz")
    assert np.allclose(back.keypoints, clips.keypoints, equal_nan=True, atol=1e-5)
    assert any("millimetres" in n for n in back.notices)
    io.save_clips(clips, tmp_path / "m.npz")
    assert io.load_clips(tmp_path / "m.npz").notices == []


def test_nan_or_zero_clips_dropped_with_a_count(tmp_path):
    clips = synth.generate(sequences=2, frames=3, seed=5)
    clips.csi[0, 0, 0, 0, 0] = np.nan
    clips.csi[2, :, :, :, 5] = 0
    io.save_clips(clips, tmp_path / "c.npz")
    back = io.load_clips(tmp_path / "c.npz")
    assert len(back.csi) == len(clips.csi) - 2
    assert "dropped 1 clips with NaN/Inf CSI and 1 with an all-zero packet" in back.notices
