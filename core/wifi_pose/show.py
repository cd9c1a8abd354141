"""A PNG of predicted vs true skeletons for a few frames (matplotlib, optional)."""

from __future__ import annotations

import numpy as np
from mlx26.core.wifi_pose.synth import BONES


def draw(pred: np.ndarray, conf: np.ndarray, gt: np.ndarray, path, frames, title: str = "") -> dict:
    """pred (N, Q, 14, 3), conf (N, Q), gt (N, P, 14, 3); one 3D panel per frame: truth black, prediction red."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from mlx26.core.common.files import atomic_path

    frames = list(frames)
    fig = plt.figure(figsize=(3.2 * len(frames), 3.4))
    for i, f in enumerate(frames):
        ax = fig.add_subplot(1, len(frames), i + 1, projection="3d")
        g = gt[f][np.isfinite(gt[f][:, 0, 0])]
        top = np.argsort(-conf[f])[: max(len(g), 1)]
        for person, colour in [(p, "k") for p in g] + [(pred[f][q], "tab:red") for q in top]:
            for a, b in BONES:
                ax.plot(*zip(person[a], person[b], strict=True), color=colour, lw=1.2)
        ax.set_xlim(0, 4)
        ax.set_ylim(0, 3.5)
        ax.set_zlim(0, 2)
        ax.set_title(f"frame {f}", fontsize=8)
        ax.tick_params(labelsize=5)
    fig.suptitle(title + "  (black: truth, red: prediction)", fontsize=9)
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=90, format="png")
    plt.close(fig)
    return {"png": str(path), "frames": frames}
