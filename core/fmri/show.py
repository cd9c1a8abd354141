"""A PNG of one slice with the chosen Omni-fMRI patches drawn (arXiv 2601.23090, Fig. of dynamic patching;
the public ``visual_3d.py`` draws the same overlay with OpenCV — this one uses matplotlib).

The background image is the clip's time-mean on the slice; coarse tokens are outlined in one colour, fine
tokens in another, so a user can see where the tokeniser kept patches whole.
"""

from __future__ import annotations

import numpy as np
from mlx26.core.common.errors import InputError

from .patching import Tokens

AXES = {"x": 0, "y": 1, "z": 2}


def draw(x: np.ndarray, tokens: Tokens, path, *, axis: str = "z", index: int | None = None, title: str = "") -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle
    from mlx26.core.common.files import atomic_path

    if axis not in AXES:
        from mlx26.core.common.errors import unknown_name

        raise unknown_name("axis", axis, AXES)
    ax_i = AXES[axis]
    n = x.shape[1 + ax_i]
    index = n // 2 if index is None else index
    if not 0 <= index < n:
        raise InputError(f"--slice {index} is outside 0..{n - 1} along {axis}")
    img = np.take(x.mean(axis=0), index, axis=ax_i)
    others = [i for i in range(3) if i != ax_i]
    fig, ax = plt.subplots(figsize=(6, 6))
    ax.imshow(img.T, origin="lower", cmap="gray", interpolation="nearest")
    colours = ["tab:orange", "tab:cyan", "tab:green", "tab:purple"]
    drawn = {}
    for s, p in enumerate(tokens.sizes):
        coords = tokens.coords(s)
        hit = coords[(coords[:, ax_i] <= index) & (index < coords[:, ax_i] + p)]
        drawn[f"drawn_{p}"] = len(hit)
        for c in hit:
            ax.add_patch(Rectangle((c[others[0]] - 0.5, c[others[1]] - 0.5), p, p, fill=False,
                                   edgecolor=colours[s % 4], linewidth=0.8 if s == 0 else 1.6))
    handles = [Rectangle((0, 0), 1, 1, fill=False, edgecolor=colours[s % 4], label=f"{p}^3: {drawn[f'drawn_{p}']}")
               for s, p in enumerate(tokens.sizes)]
    ax.legend(handles=handles, loc="upper right", fontsize=8)
    ax.set_title(title or f"{axis} = {index}", fontsize=9)
    ax.set_axis_off()
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return {"axis": axis, "slice": index, **drawn}
