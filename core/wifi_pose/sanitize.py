"""CSI sanitisation: phase unwrapping, antenna chaining, one least-squares linear phase removed across
antennas × subcarriers, and wavelet denoising of the amplitude with a real threshold.

Reconstructed from Person-in-WiFi-3D's ``CSI_sanitization`` / ``dwt_amp`` (aiotgroup, Apache-2.0; read, not
copied) with two deliberate changes, both measured on the shared Intel 5300 capture (docs/wifi-pose.md):

* the linear fit is weighted by |CSI|² (PiW3D's is unweighted), then refit once with each antenna's weight
  divided by its residual variance (feasible GLS): on a NIC whose second and third RF chains are ~10× weaker,
  an unweighted joint fit is driven by their noise;
* the slope uses the true subcarrier indices (Intel 5300's 30 of 56, spaced 2 with a gap at DC) instead of
  0..29, so the fitted slope is the timing offset in radians per subcarrier index;
* PiW3D's wavelet step (``wavedec`` then ``waverec``) thresholds nothing; here detail coefficients are
  soft-thresholded at the universal threshold σ√(2 ln n), σ = MAD(finest details)/0.6745 (PyWavelets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def clean_packets(csi: np.ndarray) -> tuple[np.ndarray, int, int]:
    """Drop packets (axis 0) holding NaN/Inf or only zeros; returns (kept, n_nan, n_zero)."""
    flat = csi.reshape(len(csi), -1)
    nan = ~(np.isfinite(flat.real) & np.isfinite(flat.imag)).all(1)
    zero = (np.nan_to_num(np.abs(flat)) == 0).all(1) & ~nan
    return csi[~(nan | zero)], int(nan.sum()), int(zero.sum())


@dataclass
class PhaseFit:
    phase: np.ndarray  # residual phase, same shape as the input (…, ant, sub), radians
    slope: np.ndarray  # (…,) radians per subcarrier index (timing offset × 2π × 312.5 kHz)
    offset: np.ndarray  # (…,) radians


def _wls_line(ph: np.ndarray, w: np.ndarray, k: np.ndarray):
    w = w / np.maximum(w.sum(axis=(1, 2), keepdims=True), 1e-30)
    kk = np.broadcast_to(k, ph.shape)
    sw, sk, skk = w.sum((1, 2)), (w * kk).sum((1, 2)), (w * kk * kk).sum((1, 2))
    sp, skp = (w * ph).sum((1, 2)), (w * kk * ph).sum((1, 2))
    det = sw * skk - sk * sk
    slope = (sw * skp - sk * sp) / np.where(det == 0, 1, det)
    offset = (sp - slope * sk) / np.where(sw == 0, 1, sw)
    return ph - slope[:, None, None] * kk - offset[:, None, None], slope, offset


def sanitize_phase(csi: np.ndarray, subcarriers, *, weighted: bool = True, refine: bool = True) -> PhaseFit:
    """csi (…, ant, sub) complex → residual phase after chaining antennas and removing one linear phase.

    Per leading index (a packet of one link): unwrap along subcarriers; antenna a is put on antenna a−1's
    2π branch through the conjugate product (the PiW3D chaining), so inter-antenna phase differences survive;
    then one (weighted) least-squares line φ = slope·k + offset over all antennas × subcarriers is removed.
    """
    k = np.asarray(subcarriers, np.float64)
    lead, (na, ns) = csi.shape[:-2], csi.shape[-2:]
    x = csi.reshape(-1, na, ns).astype(np.complex128)
    ph = np.empty(x.shape)
    ph[:, 0] = np.unwrap(np.angle(x[:, 0]), axis=-1)
    for a in range(1, na):
        ph[:, a] = np.unwrap(ph[:, a - 1] + np.angle(x[:, a] * np.conj(x[:, a - 1])), axis=-1)
    amp2 = np.abs(x) ** 2 if weighted else np.ones(x.shape)
    res, slope, offset = _wls_line(ph, amp2, k)
    if weighted and refine:
        # One feasible-GLS pass: each cell goes to the 2π branch nearest the first line, and each antenna's
        # weight is divided by its residual variance (a weak RF chain's phase noise exceeds what |CSI|² predicts).
        r = np.angle(np.exp(1j * res))
        var = np.mean(r ** 2, axis=-1, keepdims=True) + 1e-4
        line = slope[:, None, None] * k + offset[:, None, None]
        res, slope, offset = _wls_line(line + r, amp2 / var, k)
    return PhaseFit(res.reshape(csi.shape), slope.reshape(lead), offset.reshape(lead))


def phase_std(phase: np.ndarray, axis: int = 0) -> np.ndarray:
    """Per-cell std across packets of the phase wrapped around its circular mean (radians)."""
    mean = np.angle(np.mean(np.exp(1j * phase), axis=axis, keepdims=True))
    return np.std(np.angle(np.exp(1j * (phase - mean))), axis=axis)


def denoise_amplitude(amp: np.ndarray, axis: int = -1, wavelet: str = "db4", mode: str = "soft",
                      max_level: int = 3) -> np.ndarray:
    """Wavelet denoising along ``axis`` (packets): soft universal threshold on the detail levels.

    At most ``max_level`` levels: deeper details of a slow signal hold the signal itself, and thresholding
    them at the finest level's noise estimate biases it (measured in the tests: 3 levels keep ~10 % of the
    noise power on a 3-cycle sine in 256 samples, 5 levels ~50 %).
    """
    import pywt

    x = np.moveaxis(np.asarray(amp, np.float64), axis, -1)
    n = x.shape[-1]
    w = pywt.Wavelet(wavelet)
    level = min(pywt.dwt_max_level(n, w.dec_len), max_level)
    if level < 1:
        return np.moveaxis(x, -1, axis)
    coeffs = pywt.wavedec(x, w, mode="symmetric", level=level, axis=-1)
    sigma = np.median(np.abs(coeffs[-1]), axis=-1, keepdims=True) / 0.6745
    thr = sigma * np.sqrt(2.0 * np.log(n))
    coeffs = [coeffs[0]] + [pywt.threshold(c, thr, mode=mode) for c in coeffs[1:]]
    out = pywt.waverec(coeffs, w, mode="symmetric", axis=-1)[..., :n]
    return np.moveaxis(out, -1, axis)


def capture_report(csi: np.ndarray, subcarriers, *, weighted: bool = True, refine: bool = True) -> dict:
    """Phase std across packets, raw vs sanitised, for a capture csi (P, link, ant, sub)."""
    fit = sanitize_phase(csi, subcarriers, weighted=weighted, refine=refine)
    raw = phase_std(np.angle(csi))  # (link, ant, sub)
    san = phase_std(fit.phase)
    amp = np.abs(csi).mean(axis=(0, 1, 3))
    # How noisy each antenna's channel is from packet to packet: |CSI|'s relative std across packets (median
    # over links and subcarriers; the per-packet gain adds to it). Where it is large the channel itself is
    # noise-dominated, and removing per-packet phase offsets (all a sanitiser does) cannot steady the phase.
    rel = np.median(np.abs(csi).std(0) / np.maximum(np.abs(csi).mean(0), 1e-12), axis=(0, 2))
    return {"amplitude_rel_std_per_antenna": [float(v) for v in rel],"phase_std_raw_median": float(np.median(raw)), "phase_std_sanitized_median": float(np.median(san)),
            "phase_std_sanitized_strongest_antenna": float(np.median(san[:, int(amp.argmax())])),
            "phase_std_sanitized_per_antenna": [float(np.median(san[:, a])) for a in range(san.shape[1])],
            "mean_amplitude_per_antenna": [float(v) for v in amp],
            "slope_rad_per_subcarrier_median": float(np.median(fit.slope)), "weighted_fit": weighted, "refined_fit": weighted and refine}


def features(csi: np.ndarray, subcarriers, *, denoise: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Model inputs from clips (N, link, ant, sub, pkt): amplitude and sanitised phase, each (N, pkt, link·ant·sub).

    The amplitude is divided by each clip's median (AGC gain) and wavelet-denoised along packets.
    """
    amp = np.abs(csi)
    amp = amp / np.maximum(np.median(amp, axis=(1, 2, 3, 4), keepdims=True), 1e-12)
    if denoise and csi.shape[-1] >= 8:
        amp = denoise_amplitude(amp, axis=-1)
    x = np.moveaxis(csi, -1, 1)  # (N, pkt, link, ant, sub)
    ph = sanitize_phase(x, subcarriers).phase
    n, t = x.shape[:2]
    return (np.moveaxis(amp, -1, 1).reshape(n, t, -1).astype(np.float32),
            ph.reshape(n, t, -1).astype(np.float32))
