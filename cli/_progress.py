"""Progress on stderr for long jobs (issue 31): a bar with the job's own total and unit, and a spinner.

* :class:`Bar` — ``with Bar("dqn CartPole-v1", total=600, unit="steps") as bar: bar.update(step)``
  draws ``description ━━━━ 300/600 250 steps/s 0:00:01 eta 0:00:01 · status``: the count in the
  job's unit (steps, records, epochs …, not metric records), the rate in that unit, elapsed time
  and the time left. :meth:`Bar.update` sets the count ("at step N"; training loops report that),
  :meth:`Bar.advance` adds to it, ``status=`` is a short text after it (the last loss). An update
  costs about 2 µs (the drawing runs a few times a second in rich's thread), so a loop may report
  every step.
* :func:`spinner` — ``with spinner("loading tiny-moe…"):`` for a silent start-up phase; inside a
  running :class:`Bar` it becomes the bar's status instead (rich draws one live display at a time).
* :func:`track` — iterate and advance, or move to each item's ``step``.

All of it is a no-op when stderr is not a terminal, with ``-q`` (``quiet=True``) or when the run's
``-q`` was given to any command (:func:`mlx26.cli._io.quiet_requested`). Nothing is written to
stdout: records printed while a bar runs still go to stdout (to the same terminal they are printed
above the bar). rich is imported only when a bar or spinner is shown: this module is on the
``mlx26 --help`` path.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from mlx26.cli._io import quiet_requested

# Tests set this to a rich Console (e.g. ``Console(file=StringIO(), force_terminal=True)``): bars
# and spinners then draw on it as if stderr were a terminal.
TEST_CONSOLE: Any = None

REFRESH_PER_SECOND = 4  # redraws a second (a shared 2-core machine: keep the drawing thread cheap)
_active: list[Bar] = []  # the bar on screen, if any (a spinner inside it becomes its status)


def _tty(stream: IO[str] | None) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except ValueError:  # closed stream
        return False


def enabled(quiet: bool = False) -> bool:
    """Whether progress is drawn: stderr is a terminal (or a test console is set) and no ``-q``."""
    if quiet or quiet_requested():
        return False
    return TEST_CONSOLE is not None or _tty(sys.stderr)


def _console() -> Any:
    if TEST_CONSOLE is not None:
        return TEST_CONSOLE
    from rich.console import Console

    return Console(stderr=True)


def _same_terminal() -> bool:
    """stdout and stderr are one terminal: stdout lines are then printed above the bar, not through it."""
    if TEST_CONSOLE is not None or not (_tty(sys.stdout) and _tty(sys.stderr)):
        return False
    try:
        return os.ttyname(sys.stdout.fileno()) == os.ttyname(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):
        return False


def _rate_text(speed: float | None, unit: str) -> str:
    if speed is None or speed <= 0:
        return f"– {unit}/s"
    if speed >= 100:
        return f"{speed:,.0f} {unit}/s"
    if speed >= 10:
        return f"{speed:.1f} {unit}/s"
    if speed >= 0.1:
        return f"{speed:.2f} {unit}/s"
    return f"{60 * speed:.2f} {unit}/min"


def _columns(unit: str) -> list[Any]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """The rate in the job's unit (rich's own speed estimate over the last 30 s)."""

        def render(self, task: Any) -> Text:
            return Text(_rate_text(task.finished_speed or task.speed, unit), style="progress.data.speed")

    class EtaColumn(TimeRemainingColumn):
        def render(self, task: Any) -> Text:
            if task.total is None:
                return Text("")
            return Text.assemble(("eta ", "progress.remaining"), super().render(task))

    return [TextColumn("{task.description}"), BarColumn(bar_width=28), MofNCompleteColumn(), RateColumn(),
            TimeElapsedColumn(), EtaColumn(), TextColumn("{task.fields[status]}")]


class Bar:
    """A progress bar on stderr with a known total in the job's ``unit``; a no-op where :func:`enabled` is false.

    ``total=None`` draws a pulse (``N/?``) until a total is given to :meth:`update`. Use as a context
    manager; the bar disappears when the block ends (stderr keeps only notices).
    """

    def __init__(self, description: str = "working", total: float | None = None, unit: str = "steps", *,
                 quiet: bool = False, status: str = "", completed: float = 0):
        self.description, self.total, self.unit, self.status = description, total, unit, status
        self.completed = completed
        self.active = False
        self._quiet = quiet
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> Bar:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> Bar:
        if self.active or not enabled(self._quiet) or _active:  # one live display at a time
            return self
        from rich.progress import Progress

        self._progress = Progress(*_columns(self.unit), console=_console(), transient=True,
                                  refresh_per_second=REFRESH_PER_SECOND, redirect_stdout=_same_terminal(),
                                  redirect_stderr=True)
        self._task = self._progress.add_task(self.description, total=self.total, completed=self.completed,
                                             status=self._status_text())
        self._progress.start()
        self.active = True
        _active.append(self)
        return self

    def stop(self) -> None:
        if not self.active:
            return
        self.active = False
        if self in _active:
            _active.remove(self)
        self._progress.stop()

    def _status_text(self) -> str:
        return f"· {self.status}" if self.status else ""

    def update(self, completed: float | None = None, *, total: float | None = None, description: str | None = None,
               status: str | None = None) -> None:
        """Move to ``completed`` (e.g. "at step N"); change the total, description or status text."""
        if total is not None:
            self.total = total
        if description is not None:
            self.description = description
        if status is not None:
            self.status = status
        if completed is not None:
            self.completed = completed
        if not self.active:
            return
        self._progress.update(self._task, completed=self.completed, total=self.total, description=self.description,
                              status=self._status_text())

    def phase(self, description: str, total: float | None, *, completed: float = 0, status: str = "") -> None:
        """Start the next phase of the job on the same bar (a new count, rate and clock)."""
        self.description, self.total, self.completed, self.status = description, total, completed, status
        if self.active:
            self._progress.reset(self._task, total=total, completed=completed, description=description,
                                 status=self._status_text())

    def advance(self, amount: float = 1, **changes: Any) -> None:
        self.update(self.completed + amount, **changes)

    def set_status(self, text: str) -> None:
        self.update(status=text)


def bar(description: str = "working", total: float | None = None, unit: str = "steps", *, quiet: bool = False,
        status: str = "") -> Bar:
    """A :class:`Bar` (use ``with``)."""
    return Bar(description, total, unit, quiet=quiet, status=status)


@contextlib.contextmanager
def spinner(message: str, *, quiet: bool = False) -> Iterator[Callable[[str], None]]:
    """A spinner with ``message`` on stderr while the block runs (a silent start-up phase).

    The block gets ``say(text)``, which replaces the message (the next phase: "calibrating…")."""
    if _active:  # a bar is on screen: say it there
        shown = _active[-1]
        before = shown.status
        shown.set_status(message)
        try:
            yield shown.set_status
        finally:
            shown.set_status(before)
        return
    if not enabled(quiet):
        yield lambda _text: None
        return
    with _console().status(message, spinner="dots", refresh_per_second=8) as status:
        yield lambda text: status.update(text)


def track(iterable: Iterable[Any], *, total: float | None = None, description: str = "working",
          unit: str = "records", quiet: bool = False,
          at: Callable[[Any], float | None] | None = None, status: Callable[[Any], str | None] | None = None,
          start: str = "") -> Iterator[Any]:
    """Iterate with a :class:`Bar`: each item advances it by one, or with ``at`` moves it to ``at(item)``;
    ``status(item)`` is the text after the bar (None: unchanged), ``start`` the text before the first item."""
    if not enabled(quiet):
        yield from iterable
        return
    with Bar(description, total, unit, status=start) as shown:
        for item in iterable:
            text = status(item) if status is not None else None
            position = at(item) if at is not None else None
            if at is None:
                shown.advance(status=text)
            else:
                shown.update(position, status=text)
            yield item
