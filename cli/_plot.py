"""The ``--plot FILE.png`` option shared by the commands that draw a figure (core/common/plot.py draws it).

``check_plot(plot, force)`` runs with the other up-front checks, before any heavy work: the path must end
in .png and be new (or ``--force``/MLX26_FORCE) in an existing folder (exit 2), and matplotlib must be
installed (exit 3 with ``pip install 'mlx26[plot]'``). ``tee`` keeps a copy of streamed records for the
figure drawn at the end. Only the standard library, typer and mlx26.cli._io are imported at module level
(the ``--help`` path); matplotlib loads when a figure is drawn.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Annotated, Any

import typer
from mlx26.cli._io import FORCE_ENV


def _help(what: str) -> str:
    return f"Also write a PNG of {what} (matplotlib)."


# One alias per figure, so each command's help says what its PNG shows.
PlotOpt = Annotated[str | None, typer.Option(
    "--plot", help=_help("the learning curves: each numeric metric vs step, one panel each"), metavar="FILE.png")]
DpMixPlotOpt = Annotated[str | None, typer.Option(
    "--plot", help=_help("each mechanism's noise density at the first (ε, δ) and its l1/l2 cost vs ε "
                         "(the ε compared, or ε/4 … 16ε, not below 0.25, around a single ε)"), metavar="FILE.png")]
QuantizePlotOpt = Annotated[str | None, typer.Option(
    "--plot", help=_help("error vs extra memory per method (base, LQER, the chosen correction): per "
                         "projection and for the whole model"), metavar="FILE.png")]
ProfilePlotOpt = Annotated[str | None, typer.Option(
    "--plot", help=_help("the stage breakdown: ms per decode step and share of the step, per stage"),
    metavar="FILE.png")]
# --force of a command with --plot: the help names the PNG it replaces too.
ForcePlotOpt = Annotated[bool, typer.Option("--force", envvar=FORCE_ENV,
                                            help="Overwrite an existing --output or --plot file.")]
ForceOutPlotOpt = Annotated[bool, typer.Option("--force", envvar=FORCE_ENV,
                                               help="Overwrite an existing --out, --output or --plot file.")]


def check_plot(plot: str | None, force: bool) -> None:
    """Validate --plot before any work: .png, new or --force, folder exists; matplotlib installed."""
    if plot is None:
        return
    from mlx26.cli._errors import require
    from mlx26.cli._io import check_output
    from mlx26.core.common.plot import check_png

    if not plot.strip():
        from mlx26.cli._errors import UsageError

        raise UsageError("the --plot path is empty.")
    check_png(plot, force)
    check_output(plot, force)
    require("matplotlib", "plot")


def tee(records: Iterable[dict[str, Any]], keep: list[dict[str, Any]] | None) -> Iterator[dict[str, Any]]:
    """Yield ``records`` unchanged, appending each to ``keep`` (a no-op copy when ``keep`` is None)."""
    for record in records:
        if keep is not None:
            keep.append(dict(record))
        yield record


def wrote(result: dict[str, Any], quiet: bool) -> None:
    """The one stderr line after a figure is written."""
    from mlx26.cli._io import notice

    notice(f"plot: wrote {result['plot']} ({result['width']}×{result['height']} px)", quiet)


def record_steps(keep: list[dict[str, Any]] | None, then: Any = None) -> Any:
    """A ``progress(step, loss)`` callback that also appends {"step", "loss"} to ``keep`` (``then`` alone if None)."""
    if keep is None:
        return then

    def callback(step: int, loss: float) -> None:
        keep.append({"step": step, "loss": loss})
        if then is not None:
            then(step, loss)

    return callback


def read_jsonl(path: Any) -> list[dict[str, Any]]:
    """The object records of a run's metrics.jsonl (blank or unparsable lines skipped); [] if it is missing."""
    import json
    from pathlib import Path

    p = Path(path)
    if not p.is_file():
        return []
    records = []
    with p.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                records.append(value)
    return records


def curves(plot: str | None, records: Iterable[dict[str, Any]], *, title: str, force: bool, quiet: bool,
           series: str | None = None, note: str | None = None) -> None:
    """Draw the learning curves of ``records`` to ``plot`` (nothing when ``plot`` is None)."""
    if plot is None:
        return
    from mlx26.core.common.plot import learning_curves

    result = learning_curves(list(records), plot, series=series, title=title, force=force, note=note)
    if not result["fields"]:
        from mlx26.cli._io import notice

        notice(f"plot: no metric varied over the run; {plot} says so", quiet)
    wrote(result, quiet)
