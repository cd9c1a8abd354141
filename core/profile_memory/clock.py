"""A lap clock: every instant of the timed region is charged to exactly one stage.

For the profiler of He, Ma, Sun, Cong (ICML 2026) the per-stage times must add up to the
end-to-end time. ``lap(stage)`` synchronises the device (``torch.cuda.synchronize`` on a GPU;
CPU ops are synchronous), reads ``perf_counter`` and charges the time since the previous lap
to ``stage``, so consecutive laps leave no gaps. The end-to-end time is read by the caller
with its own clock around the whole region, independently of the laps. Given a ``spans`` list, every
lap is also appended to it as (stage, start, end) in ``perf_counter`` seconds (the stage track of
``--trace``, :mod:`.trace`).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable


class LapClock:
    def __init__(self, sync: Callable[[], None] | None = None, spans: list[tuple[str, float, float]] | None = None):
        self.sync = sync or (lambda: None)
        self.spans = spans
        self.times: dict[str, float] = defaultdict(float)
        self._last: float | None = None

    def start(self) -> None:
        self.sync()
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        if self._last is None:
            raise RuntimeError("LapClock.lap called before start")
        self.sync()
        now = time.perf_counter()
        self.times[stage] += now - self._last
        if self.spans is not None:
            self.spans.append((stage, self._last, now))
        self._last = now

    def stop(self) -> None:
        self._last = None
