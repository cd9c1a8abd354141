"""Checks of the PNGs that ``--plot FILE.png`` writes (core/common/plot.py): a real image of the expected size."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def read_png(path: str | Path) -> np.ndarray:
    """The image as an (H, W, channels) float array in [0, 1] (matplotlib reads PNG without Pillow)."""
    import matplotlib.image

    with open(path, "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG file"
    return np.asarray(matplotlib.image.imread(str(path)))


def assert_png(path: str | Path, panels: int) -> np.ndarray:
    """``path`` is a PNG of ``figure_pixels(panels)`` that is not blank: several colours, some contrast."""
    from mlx26.core.common.plot import figure_pixels

    image = read_png(path)
    width, height = figure_pixels(panels)
    assert image.shape[:2] == (height, width), f"{path}: {image.shape[1]}×{image.shape[0]} px, want {width}×{height}"
    rgb = image[..., :3]
    assert float(rgb.std()) > 0.03, f"{path} looks blank (pixel std {rgb.std():.4f})"
    colours = np.unique((rgb.reshape(-1, 3) * 255).round().astype(np.uint8), axis=0)
    assert len(colours) > 8, f"{path} has only {len(colours)} distinct colours"
    return image
