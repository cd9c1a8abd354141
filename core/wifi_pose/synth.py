"""SYNTHETIC CSI from 3D poses (ours; not a measurement). Figures computed on it are labelled SYNTHETIC.

Geometry follows the Person-in-WiFi 3D deployment in outline (a 4 m × 3.5 m area, one transmitter, three
receivers of three antennas each, 30 Intel-5300 subcarriers at 5 GHz, frames of 20 packets); every number
below is our choice. Per packet and receive antenna the channel is

    H(f_k) = Σ_static g_p e^{-j2π f_k τ_p} + Σ_persons Σ_joints s_j / (d_tx,j · d_j,rx) e^{-j2π f_k (d_tx,j + d_j,rx)/c}

with static paths from the line of sight, the first-order image sources of four walls, floor and ceiling,
and a few fixed clutter scatterers; the 14 joints of each person are point scatterers (torso and head
stronger). Impairments per packet and link: a random common phase (CFO), a timing slope (STO) of
2π·Δf·τ_sto per subcarrier index, an AGC gain (±1 dB), complex Gaussian noise at ``snr_db``.
Persons walk on smooth random paths (Ornstein–Uhlenbeck velocity, reflected at the walls) with a gait
swing of the limbs; 1–``max_persons`` per sequence.
"""

from __future__ import annotations

import numpy as np
from mlx26.core.wifi_pose.io import Clips, pad_persons
from mlx26.core.wifi_pose.spec import INTEL5300_SUBCARRIERS, SUBCARRIER_SPACING_HZ

C = 299_792_458.0
FC = 5.32e9  # channel 64
ROOM = np.array([4.0, 3.5, 3.0])
# 14 joints (PiW3D's count; our order): head, neck, r/l shoulder, r/l elbow, r/l wrist, r/l hip, r/l knee, r/l ankle
JOINT_NAMES = ("head", "neck", "r_shoulder", "l_shoulder", "r_elbow", "l_elbow", "r_wrist", "l_wrist",
               "r_hip", "l_hip", "r_knee", "l_knee", "r_ankle", "l_ankle")
BONES = ((0, 1), (1, 2), (1, 3), (2, 4), (3, 5), (4, 6), (5, 7), (1, 8), (1, 9), (8, 10), (9, 11), (10, 12),
         (11, 13), (8, 9))
# Standing skeleton in the body frame (x forward, y left, z up), metres.
_REST = np.array([[0, 0, 1.65], [0, 0, 1.45], [0, -0.19, 1.42], [0, 0.19, 1.42], [0, -0.22, 1.15],
                  [0, 0.22, 1.15], [0, -0.24, 0.88], [0, 0.24, 0.88], [0, -0.11, 0.95], [0, 0.11, 0.95],
                  [0, -0.12, 0.5], [0, 0.12, 0.5], [0, -0.12, 0.08], [0, 0.12, 0.08]])
_RCS = np.array([1.0, 0.6, 0.5, 0.5, 0.3, 0.3, 0.25, 0.25, 0.8, 0.8, 0.4, 0.4, 0.3, 0.3])


def arrays(links: int = 3, antennas: int = 3):
    """Tx position and Rx antenna positions (links, antennas, 3): half-wavelength linear arrays on the walls."""
    lam = C / FC
    tx = np.array([0.05, ROOM[1] / 2, 1.2])
    centres = [np.array([ROOM[0] - 0.05, 0.8, 1.2]), np.array([ROOM[0] - 0.05, ROOM[1] - 0.8, 1.2]),
               np.array([ROOM[0] / 2, ROOM[1] - 0.05, 1.2]), np.array([ROOM[0] / 2, 0.05, 1.2])]
    axes = [np.array([0, 1.0, 0]), np.array([0, 1.0, 0]), np.array([1.0, 0, 0]), np.array([1.0, 0, 0])]
    rx = np.stack([[centres[i % 4] + axes[i % 4] * lam / 2 * (a - (antennas - 1) / 2) for a in range(antennas)]
                   for i in range(links)])
    return tx, rx


def pose(root: np.ndarray, heading: float, phase: float, height: float = 1.0) -> np.ndarray:
    """14 × 3 joints: the rest skeleton scaled by ``height``, limbs swinging with gait ``phase``, rotated, placed."""
    j = _REST * height
    swing = 0.25 * np.sin(phase)
    j = j.copy()
    for idx, sgn in ((4, 1), (6, 1), (5, -1), (7, -1), (10, -1), (12, -1), (11, 1), (13, 1)):
        lever = 0.3 if idx in (4, 5, 10, 11) else 0.55
        j[idx, 0] += sgn * swing * lever
    c, s = np.cos(heading), np.sin(heading)
    rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    return j @ rot.T + np.array([root[0], root[1], 0.0])


def _static_paths(tx, rx, rng, clutter: int = 4):
    """(links, ants, P) delays and complex gains of the static paths."""
    sources = [tx]
    for ax in range(3):
        for wall in (0.0, ROOM[ax]):
            img = tx.copy()
            img[ax] = 2 * wall - tx[ax]
            sources.append(img)
    gains, delays = [], []
    for i, src in enumerate(sources):
        d = np.linalg.norm(rx - src, axis=-1)
        gains.append((1.0 if i == 0 else 0.45) / d)
        delays.append(d / C)
    for _ in range(clutter):
        p = rng.uniform([0.2, 0.2, 0.2], ROOM - 0.2)
        d = np.linalg.norm(p - tx) + np.linalg.norm(rx - p, axis=-1)
        gains.append(0.3 / (np.linalg.norm(p - tx) * np.linalg.norm(rx - p, axis=-1)))
        delays.append(d / C)
    g = np.stack(gains, -1) * np.exp(1j * rng.uniform(0, 2 * np.pi, len(gains)))
    return np.stack(delays, -1), g


def channel(joints: np.ndarray, tx, rx, static, freqs, body_gain: float) -> np.ndarray:
    """Clean CSI (links, ants, sub) for persons' joints (P, 14, 3)."""
    tau_s, g_s = static
    h = (g_s[..., None] * np.exp(-2j * np.pi * freqs * tau_s[..., None])).sum(-2)
    if len(joints):
        pts = joints.reshape(-1, 3)
        d1 = np.linalg.norm(pts - tx, axis=-1)  # (J,)
        d2 = np.linalg.norm(rx[:, :, None, :] - pts, axis=-1)  # (L, A, J)
        amp = body_gain * np.tile(_RCS, len(joints)) / (d1 * d2)
        tau = (d1 + d2) / C
        h = h + (amp[..., None] * np.exp(-2j * np.pi * freqs * tau[..., None])).sum(-2)
    return h


def impair(h: np.ndarray, rng, *, snr_db: float, sto_ns: float, k: np.ndarray):
    """Per packet (axis 0 of h: (T, L, A, S)): CFO phase, STO slope, AGC gain, noise. Returns (csi, slope)."""
    t, links = h.shape[:2]
    cfo = rng.uniform(-np.pi, np.pi, (t, links, 1, 1))
    sto = rng.uniform(-sto_ns, sto_ns, (t, links, 1, 1)) * 1e-9
    slope = -2 * np.pi * SUBCARRIER_SPACING_HZ * sto  # rad per subcarrier index
    agc = 10 ** (rng.uniform(-1, 1, (t, links, 1, 1)) / 20)
    x = h * agc * np.exp(1j * (cfo + slope * k))
    p = np.mean(np.abs(h) ** 2)
    noise = np.sqrt(p / 10 ** (snr_db / 10) / 2) * (rng.standard_normal(h.shape) + 1j * rng.standard_normal(h.shape))
    return x + noise, slope[..., 0, 0]


def generate(sequences: int = 8, frames: int = 32, packets: int = 20, max_persons: int = 3, links: int = 3,
             antennas: int = 3, snr_db: float = 25.0, sto_ns: float = 40.0, body_gain: float = 3.0,
             fps: float = 10.0, seed: int = 0) -> Clips:
    """SYNTHETIC clips: ``sequences`` × ``frames`` consecutive frames of ``packets`` packets each."""
    rng = np.random.default_rng(seed)
    k = np.array(INTEL5300_SUBCARRIERS, float)
    freqs = FC + k * SUBCARRIER_SPACING_HZ
    tx, rx = arrays(links, antennas)
    static = _static_paths(tx, rx, rng)
    csis, kps, seqs, frs = [], [], [], []
    lo, hi = np.array([0.5, 0.5]), ROOM[:2] - np.array([0.7, 0.5])
    for s in range(sequences):
        n = int(rng.integers(1, max_persons + 1))
        pos = rng.uniform(lo, hi, (n, 2))
        vel = rng.normal(0, 0.4, (n, 2))
        heights = rng.uniform(0.92, 1.08, n)
        gait = rng.uniform(0, 2 * np.pi, n)
        for f in range(frames):
            dt = 1.0 / fps
            vel = 0.8 * vel + rng.normal(0, 0.25, (n, 2))
            pos = pos + vel * dt
            for ax in range(2):  # reflect at the walls
                low, high = pos[:, ax] < lo[ax], pos[:, ax] > hi[ax]
                pos[low, ax] = 2 * lo[ax] - pos[low, ax]
                pos[high, ax] = 2 * hi[ax] - pos[high, ax]
                vel[low | high, ax] *= -1
            speed = np.linalg.norm(vel, axis=1)
            gait = gait + 2 * np.pi * 1.6 * speed * dt
            heading = np.arctan2(vel[:, 1], vel[:, 0])
            joints = np.stack([pose(pos[i], heading[i], gait[i], heights[i]) for i in range(n)])
            # packets spread over the first 20 ms of the frame: the body moves by < 2 cm, so hold it still
            h = channel(joints, tx, rx, static, freqs, body_gain)
            x, _ = impair(np.broadcast_to(h, (packets, *h.shape)), rng, snr_db=snr_db, sto_ns=sto_ns, k=k)
            csis.append(np.moveaxis(x, 0, -1))  # (L, A, S, T)
            kps.append(joints.astype(np.float32))
            seqs.append(s)
            frs.append(f)
    return Clips(np.stack(csis).astype(np.complex64), pad_persons(kps, max_persons), np.array(seqs),
                 np.array(frs), k.astype(int), synthetic=True)
