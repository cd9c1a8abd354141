"""The figure of ``mlx26 profile-memory --plot``: the stage breakdown of a decode step, as the records report it.

Part of our reconstruction of He, Ma, Sun, Cong (ICML 2026). Bars per stage (prepare, relevancy,
retrieval, apply, other; the context prefill and the total are left out): measured milliseconds per
decode step and share of the step, one bar colour per pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SKIP = ("total",)


def draw(rows: Sequence[dict[str, Any]], path: str, *, title: str = "profile-memory",
         force: bool = False) -> dict[str, Any]:
    """Write the PNG from the command's full records; returns {plot, width, height, panels, stages}."""
    from mlx26.core.common.errors import RunFailure
    from mlx26.core.common.plot import BarPanel, save_bars

    timed = [r for r in rows if r.get("stage") not in SKIP and not str(r.get("stage", "")).startswith("setup")
             and r.get("ms_per_step") is not None]
    if not timed:
        raise RunFailure("profile-memory --plot: no timed stage records to draw.")
    stages = list(dict.fromkeys(str(r["stage"]) for r in timed))
    pipelines = list(dict.fromkeys(str(r["pipeline"]) for r in timed))
    ms: dict[str, list[float]] = {p: [0.0] * len(stages) for p in pipelines}
    share: dict[str, list[float]] = {p: [0.0] * len(stages) for p in pipelines}
    for r in timed:
        i = stages.index(str(r["stage"]))
        ms[str(r["pipeline"])][i] = float(r["ms_per_step"])
        share[str(r["pipeline"])][i] = 100.0 * float(r.get("share") or 0.0)
    panels = [BarPanel("measured time per decode step", stages, ms, ylabel="ms per step"),
              BarPanel("share of the timed step", stages, share, ylabel="% of step")]
    return save_bars(path, panels, title=title, force=force) | {"stages": stages}
