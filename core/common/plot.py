"""PNG figures shared by the commands' ``--plot FILE.png`` (no paper): line panels, bar panels, learning curves.

matplotlib (Agg backend, no display) is imported inside the functions that draw, so importing this
module stays cheap; a missing matplotlib is ``BackendMissing`` (exit 3) naming the ``plot`` extra.

Every figure is laid out on a fixed grid of panels (``PANEL_SIZE`` inches each, at ``DPI``), so its
pixel size is known in advance (``figure_pixels``); no ``bbox_inches="tight"``, which would change it.
Files are written atomically (``core/common/files.py``) and an existing file is replaced only with
``force``; the path must end in ``.png``.

- ``save_lines(path, panels)``: one axes per ``Panel``, one line (or marker set) per ``Series``.
- ``save_bars(path, panels)``: one axes per ``BarPanel``, bars per category grouped by series.
- ``learning_curves(records, path)``: metric records (dicts) → one panel per numeric field against the
  step (or epoch), at most ``MAX_PANELS``; constant, non-numeric and missing values are skipped.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import BackendMissing, InputError

DPI = 100
PANEL_SIZE = (4.8, 3.4)  # inches per panel: 480 × 340 pixels at DPI
MAX_COLS = 3
MAX_PANELS = 6
PLOT_HINT = "pip install 'mlx26[plot]'"


@dataclass
class Series:
    """One curve: ``x`` and ``y`` of equal length; ``line=False`` draws markers only."""

    label: str
    x: Sequence[float]
    y: Sequence[float]
    line: bool = True
    marker: str | None = None
    size: float | None = None


@dataclass
class Panel:
    title: str
    series: list[Series] = field(default_factory=list)
    xlabel: str = ""
    ylabel: str = ""
    logx: bool = False
    logy: bool = False
    vline: float | None = None  # a dashed vertical marker (e.g. the ε compared)
    note: str | None = None  # small text in the corner (e.g. "SYNTHETIC")


@dataclass
class BarPanel:
    """Bars at ``categories``, one bar per category for each entry of ``groups`` (label → values)."""

    title: str
    categories: list[str]
    groups: dict[str, list[float]]
    ylabel: str = ""
    logy: bool = False


def check_png(path: str | os.PathLike[str], force: bool = False) -> None:
    """InputError unless ``path`` ends in .png and is new (or ``force``) in an existing folder."""
    p = Path(path)
    if p.suffix.lower() != ".png":
        raise InputError(f"--plot writes PNG files: {path} does not end in .png.", hint="name the file FILE.png")
    if p.is_dir():
        raise InputError(f"--plot path is a directory: {path}")
    if os.path.lexists(p) and not force:
        raise InputError(f"refusing to overwrite existing file {path}.", hint="add --force (or set MLX26_FORCE=1, e.g. in a Makefile) to replace it")
    parent = Path(os.path.realpath(p)).parent
    if not parent.is_dir():
        raise InputError(f"--plot folder does not exist: {p.parent}")


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, or BackendMissing (exit 3) with the pip line."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise BackendMissing(f"--plot needs the optional package 'matplotlib', which is not installed ({exc}).",
                             hint=PLOT_HINT) from exc
    return plt


def grid(n: int) -> tuple[int, int]:
    """(rows, cols) of the panel grid for ``n`` panels."""
    n = max(1, n)
    cols = min(n, MAX_COLS)
    return math.ceil(n / cols), cols


def figure_pixels(n: int) -> tuple[int, int]:
    """(width, height) in pixels of a figure of ``n`` panels."""
    rows, cols = grid(n)
    return round(cols * PANEL_SIZE[0] * DPI), round(rows * PANEL_SIZE[1] * DPI)


def _figure(plt: Any, n: int) -> tuple[Any, list[Any]]:
    rows, cols = grid(n)
    fig, axes = plt.subplots(rows, cols, figsize=(cols * PANEL_SIZE[0], rows * PANEL_SIZE[1]), dpi=DPI,
                             squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.axis("off")
    return fig, flat[:n]


def _save(plt: Any, fig: Any, path: str | os.PathLike[str], title: str | None, force: bool, n: int) -> dict[str, Any]:
    from mlx26.core.common.files import atomic_path

    if title:
        fig.suptitle(title, fontsize=10)
    try:
        fig.tight_layout()
    except (ValueError, RuntimeError):  # a layout it cannot solve still draws; keep the fixed size
        pass
    check_png(path, force)
    try:
        with atomic_path(path, suffix=".png") as tmp:
            fig.savefig(tmp, dpi=DPI, format="png")
    finally:
        plt.close(fig)
    width, height = figure_pixels(n)
    return {"plot": str(path), "width": width, "height": height, "panels": n}


def save_lines(path: str | os.PathLike[str], panels: Sequence[Panel], *, title: str | None = None,
               force: bool = False) -> dict[str, Any]:
    """Line panels to ``path`` (PNG); returns {plot, width, height, panels}."""
    check_png(path, force)
    plt = pyplot()
    fig, axes = _figure(plt, len(panels))
    for ax, panel in zip(axes, panels, strict=False):
        for s in panel.series:
            style = "-" if s.line else "none"
            ax.plot(list(s.x), list(s.y), linestyle=style, marker=s.marker or ("o" if not s.line else None),
                    markersize=s.size or (5 if not s.line else 3), label=s.label)
        if panel.logx:
            ax.set_xscale("log")
        if panel.logy:
            ax.set_yscale("log")
        xs = [float(v) for s in panel.series for v in s.x]
        if xs and not panel.logx and all(v.is_integer() for v in xs):  # steps: no 1.25 ticks
            from matplotlib.ticker import MaxNLocator

            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if panel.vline is not None:
            ax.axvline(panel.vline, color="grey", linestyle="--", linewidth=0.8)
        if panel.note:
            ax.text(0.99, 0.01, panel.note, transform=ax.transAxes, ha="right", va="bottom", fontsize=7, color="grey")
        ax.set_title(panel.title, fontsize=9)
        ax.set_xlabel(panel.xlabel, fontsize=8)
        ax.set_ylabel(panel.ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        if len(panel.series) > 1 or (panel.series and panel.series[0].label):
            ax.legend(fontsize=7)
    return _save(plt, fig, path, title, force, len(panels))


def save_bars(path: str | os.PathLike[str], panels: Sequence[BarPanel], *, title: str | None = None,
              force: bool = False) -> dict[str, Any]:
    """Grouped bar panels to ``path`` (PNG); returns {plot, width, height, panels}."""
    check_png(path, force)
    plt = pyplot()
    fig, axes = _figure(plt, len(panels))
    for ax, panel in zip(axes, panels, strict=False):
        k = max(1, len(panel.groups))
        width = 0.8 / k
        for i, (label, values) in enumerate(panel.groups.items()):
            xs = [j - 0.4 + width * (i + 0.5) for j in range(len(panel.categories))]
            ax.bar(xs, values, width=width, label=label)
        ax.set_xticks(range(len(panel.categories)))
        ax.set_xticklabels(panel.categories, fontsize=7, rotation=20 if len(panel.categories) > 4 else 0)
        if panel.logy:
            ax.set_yscale("log")
        ax.set_title(panel.title, fontsize=9)
        ax.set_ylabel(panel.ylabel, fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(alpha=0.3, axis="y")
        if len(panel.groups) > 1:
            ax.legend(fontsize=7)
    return _save(plt, fig, path, title, force, len(panels))


# --------------------------------------------------------------------------- learning curves

def number(value: Any) -> float | None:
    """A finite real as float; None for bools, strings, None, NaN, ±inf and anything else."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    x = float(value)
    return x if math.isfinite(x) else None


def _rank(name: str) -> int:
    low = name.lower()
    if "loss" in low:
        return 0
    if any(k in low for k in ("reward", "return", "acc", "bpb", "score", "success", "error", "l1")):
        return 1
    if low.endswith(("_s", "seconds", "_time", "time_s")) or low in ("lr", "learning_rate", "epoch"):
        return 3
    return 2


def _x_of(record: Mapping[str, Any], xs: Sequence[str]) -> tuple[str, float] | None:
    for key in xs:
        v = number(record.get(key))
        if v is not None:
            return key, v
    return None


def curve_fields(records: Iterable[Mapping[str, Any]], *, x: str | Sequence[str] = ("step", "epoch"),
                 series: str | None = None, max_panels: int = MAX_PANELS) -> list[str]:
    """The fields ``learning_curves`` draws: numeric, not constant, not the x or series key; losses first."""
    xs = (x,) if isinstance(x, str) else tuple(x)
    values: dict[str, set[float]] = {}
    for r in records:
        for k, v in r.items():
            if k in xs or k == series:
                continue
            n = number(v)
            if n is not None:
                values.setdefault(k, set()).add(n)
    varying = [k for k, seen in values.items() if len(seen) > 1]
    order = {k: i for i, k in enumerate(varying)}
    return sorted(varying, key=lambda k: (_rank(k), order[k]))[:max_panels]


def learning_curves(records: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], *,
                    x: str | Sequence[str] = ("step", "epoch"), series: str | None = None,
                    title: str | None = None, force: bool = False, max_panels: int = MAX_PANELS,
                    note: str | None = None) -> dict[str, Any]:
    """One panel per numeric metric of ``records`` against ``x`` (the first of the keys present).

    Records without a numeric x are left out (when none has one, the record's position is the x).
    ``series`` names a field whose values split a panel into lines (e.g. the "phase" of a record).
    Returns {plot, width, height, panels, fields, points}.
    """
    xs = (x,) if isinstance(x, str) else tuple(x)
    records = list(records)
    with_x = [r for r in records if _x_of(r, xs) is not None]
    by_position = not with_x
    rows = records if by_position else with_x
    fields = curve_fields(rows, x=xs, series=series, max_panels=max_panels)
    xlabel = "record" if by_position else next(k for k in xs if any(number(r.get(k)) is not None for r in rows))
    panels = []
    for f in fields:
        lines: dict[str, tuple[list[float], list[float]]] = {}
        for i, r in enumerate(rows, 1):
            y = number(r.get(f))
            if y is None:
                continue
            at = float(i) if by_position else _x_of(r, xs)[1]  # type: ignore[index]
            label = str(r.get(series, "")) if series else ""
            lines.setdefault(label, ([], []))
            lines[label][0].append(at)
            lines[label][1].append(y)
        panel_series = [Series(label, xv, yv, line=len(xv) > 1, marker="o" if len(xv) <= 12 else None)
                        for label, (xv, yv) in lines.items()]
        panels.append(Panel(f, panel_series, xlabel=xlabel, note=note))
    if not panels:
        return _empty(path, title, force) | {"fields": [], "points": 0}
    result = save_lines(path, panels, title=title, force=force)
    return result | {"fields": fields, "points": sum(len(s.x) for p in panels for s in p.series)}


def _empty(path: str | os.PathLike[str], title: str | None, force: bool) -> dict[str, Any]:
    check_png(path, force)
    plt = pyplot()
    fig, (ax,) = _figure(plt, 1)
    ax.axis("off")
    ax.text(0.5, 0.5, "no metric varied over the run:\nnothing to draw", ha="center", va="center", fontsize=9)
    return _save(plt, fig, path, title, force, 1)
