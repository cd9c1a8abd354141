"""Pose metrics: MPJPE after Hungarian (scipy) or PiW3D's greedy matching, PCK3D, the mean-pose baseline.

Every ground-truth person is matched to one prediction among the top-G by confidence (G = its number of
persons), as PiW3D's evaluation matches every ground-truth person; MPJPE is the mean Euclidean joint
error of the matched pairs in millimetres. Greedy matching (PiW3D's ``calc_mpjpe``) repeatedly takes the
globally closest unmatched pair; Hungarian minimises the summed cost, so its MPJPE is never larger.
"""

from __future__ import annotations

import numpy as np
from mlx26.core.wifi_pose.spec import PCK_MM


def _cost(pred: np.ndarray, gt: np.ndarray) -> np.ndarray:
    return np.linalg.norm(gt[:, None] - pred[None], axis=-1).mean(-1)  # (G, K)


def match(pred: np.ndarray, gt: np.ndarray, method: str = "hungarian") -> list[tuple[int, int]]:
    """(gt index, pred index) pairs for pred (K, J, 3), gt (G, J, 3)."""
    cost = _cost(pred, gt)
    if method == "hungarian":
        from scipy.optimize import linear_sum_assignment

        r, c = linear_sum_assignment(cost)
        return list(zip(r.tolist(), c.tolist(), strict=True))
    pairs, used_g, used_p = [], set(), set()
    for flat in np.argsort(cost, axis=None, kind="stable"):
        g, p = divmod(int(flat), cost.shape[1])
        if g in used_g or p in used_p:
            continue
        pairs.append((g, p))
        used_g.add(g)
        used_p.add(p)
        if len(used_g) == cost.shape[0] or len(used_p) == cost.shape[1]:
            break
    return pairs


def joint_errors(kp: np.ndarray, conf: np.ndarray, gt: np.ndarray, method: str = "hungarian") -> np.ndarray:
    """Per-joint errors (mm) of every matched ground-truth person over a batch: (M, J)."""
    out = []
    for i in range(len(gt)):
        g = gt[i][np.isfinite(gt[i][:, 0, 0])]
        if not len(g):
            continue
        top = np.argsort(-conf[i], kind="stable")[: max(len(g), 1)]
        pairs = match(kp[i][top], g, method)
        for gi, pi in pairs:
            out.append(np.linalg.norm(g[gi] - kp[i][top][pi], axis=-1) * 1000.0)
    return np.array(out) if out else np.zeros((0, gt.shape[2]))


def summarise(err: np.ndarray) -> dict:
    d = {"mpjpe_mm": float(err.mean()) if err.size else float("nan"), "persons_matched": int(len(err))}
    for t in PCK_MM:
        d[f"pck3d@{t}"] = float((err < t).mean()) if err.size else float("nan")
    return d


def evaluate(kp: np.ndarray, conf: np.ndarray, gt: np.ndarray) -> dict:
    h = summarise(joint_errors(kp, conf, gt, "hungarian"))
    g = joint_errors(kp, conf, gt, "greedy")
    return {**h, "mpjpe_greedy_mm": float(g.mean()) if g.size else float("nan")}


def mean_pose_baseline(train_kp: np.ndarray, test_kp: np.ndarray) -> dict:
    """Predict the training set's mean skeleton (absolute position) for every test person."""
    mean = np.nanmean(train_kp.reshape(-1, *train_kp.shape[-2:]), 0)
    n, p = test_kp.shape[:2]
    pred = np.broadcast_to(mean, (n, p, *mean.shape)).copy()
    return summarise(joint_errors(pred, np.zeros((n, p)), test_kp))
