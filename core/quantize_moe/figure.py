"""The figure of ``mlx26 quantize-moe --plot``: relative error vs extra memory, one marker set per method.

Part of our reconstruction of TileQ (Gu, Chen, Hu, Liu, ICML 2026) on top of LQER/L2QER. The methods of
one run are read off its projection records: the base quantizer alone (``err_base``, no extra memory),
per-expert LQER at the reference rank (``err_lqer`` / ``lqer_bytes``; the run's own correction under
``--lowrank lqer``) and TileQ (``err_lowrank`` / ``extra_bytes``). Left panel: every layer × projection;
right panel: the whole model (summed extra memory, mean error over the projections).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

KIB = 1024.0


def methods(records: Sequence[dict[str, Any]]) -> dict[str, list[tuple[float, float]]]:
    """{method label: [(extra KiB, relative error) per projection]} of a run's projection records."""
    proj = [r for r in records if r.get("record") == "projection"]
    out: dict[str, list[tuple[float, float]]] = {}
    for r in proj:
        base = str(r.get("base", "base"))
        out.setdefault(f"{base} (no correction)", []).append((0.0, float(r["err_base"])))
        lowrank = r.get("lowrank")
        if lowrank == "lqer":
            out.setdefault(f"{base} + LQER r{r.get('rank')}", []).append(
                (r["extra_bytes"] / KIB, float(r["err_lowrank"])))
        elif lowrank == "tileq":
            if r.get("err_lqer") is not None:
                out.setdefault(f"{base} + LQER r{r.get('lqer_rank')}", []).append(
                    (r["lqer_bytes"] / KIB, float(r["err_lqer"])))
            out.setdefault(f"{base} + TileQ", []).append((r["extra_bytes"] / KIB, float(r["err_lowrank"])))
    return out


def draw(records: Sequence[dict[str, Any]], path: str, *, title: str = "quantize-moe",
         force: bool = False) -> dict[str, Any]:
    """Write the PNG; returns the plot's {plot, width, height, panels} and the methods drawn."""
    from mlx26.core.common.errors import RunFailure
    from mlx26.core.common.plot import Panel, Series, save_lines

    by_method = methods(records)
    if not by_method:
        raise RunFailure("quantize-moe --plot: the run produced no projection records to draw.")
    per = [Series(name, [p[0] for p in pts], [p[1] for p in pts], line=False, marker=m)
           for (name, pts), m in zip(by_method.items(), "osD^v", strict=False)]
    whole = [Series(name, [sum(p[0] for p in pts)], [sum(p[1] for p in pts) / len(pts)], line=False, marker=m, size=8)
             for (name, pts), m in zip(by_method.items(), "osD^v", strict=False)]
    panels = [Panel("per layer × projection", per, xlabel="extra memory (KiB)", ylabel="relative error ‖(W−Ŵ)S‖/‖WS‖"),
              Panel("whole model", whole, xlabel="total extra memory (KiB)", ylabel="mean relative error")]
    return save_lines(path, panels, title=title, force=force) | {"methods": list(by_method)}
