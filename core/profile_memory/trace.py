"""A torch.profiler trace of a profile-memory run, with the profiler's own stage laps as a track of their own.

Support code for the stage profiler of He, Ma, Sun, Cong (ICML 2026); the trace format is Chrome's trace
event JSON that ``torch.profiler`` exports and Perfetto (ui.perfetto.dev) or chrome://tracing open. Ours:
the stage track. :class:`~.clock.LapClock` charges every instant of the timed region to one stage
(prepare / relevancy / retrieval / apply); with a :class:`Recorder` it also keeps each lap as a span, and
:meth:`Recorder.write` adds those spans to the exported trace as complete events on a process named
"mlx26 stages", one thread per pipeline, so the operators torch recorded sit under the stage that was
charged for them.

The two clocks are aligned by a marker: ``perf_counter`` is read just before and just after a tiny
``record_function`` range, and the range's midpoint in the trace is matched to the midpoint of the two
readings (measured error in development: tens of microseconds, against stages of milliseconds).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mlx26.core.common.files import atomic_path

MARKER = "mlx26.clock_sync"
STAGE_PROCESS = "mlx26 stages"


@contextlib.contextmanager
def _silent_stderr() -> Iterator[None]:
    """Kineto prints a "profiler_start/stop" line to file descriptor 2 at C++ level on every start and stop
    (no setting turns it off); hide exactly those two calls, nothing else."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class Recorder:
    """Context manager around the profiled region; ``spans(pipeline)`` gives the list a LapClock fills."""

    def __init__(self, device: str = "cpu"):
        self.device = device
        self._spans: dict[str, list[tuple[str, float, float]]] = {}
        self._prof: Any = None
        self._mark: tuple[float, float] | None = None

    def spans(self, pipeline: str) -> list[tuple[str, float, float]]:
        return self._spans.setdefault(pipeline, [])

    def __enter__(self) -> Recorder:
        from torch.profiler import ProfilerActivity, profile, record_function

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.device == "gpu" else [])
        self._prof = profile(activities=activities)
        with _silent_stderr():
            self._prof.__enter__()
        with record_function("mlx26.warmup"):  # the first range carries a one-off cost; keep it off the marker
            pass
        before = time.perf_counter()
        with record_function(MARKER):
            pass
        self._mark = (before, time.perf_counter())
        return self

    def __exit__(self, *exc: Any) -> None:
        with _silent_stderr():
            self._prof.__exit__(*exc)

    def write(self, path: str) -> dict[str, Any]:
        """Export torch's trace, add the stage track, write ``path`` atomically; returns a small summary."""
        with atomic_path(path) as tmp:
            self._prof.export_chrome_trace(str(tmp))
            trace = json.loads(Path(tmp).read_text(encoding="utf-8"))
            events = trace["traceEvents"] if isinstance(trace, dict) else trace
            count = self._add_stages(events)
            Path(tmp).write_text(json.dumps(trace), encoding="utf-8")
        return {"trace": path, "trace_events": len(events), "stage_spans": count}

    def _add_stages(self, events: list[dict[str, Any]]) -> int:
        marker = next(e for e in events if e.get("name") == MARKER and e.get("ph") == "X")
        assert self._mark is not None
        offset_us = (float(marker["ts"]) + float(marker.get("dur", 0)) / 2) - sum(self._mark) / 2 * 1e6
        pid = STAGE_PROCESS
        events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": STAGE_PROCESS}})
        count = 0
        for tid, (pipeline, spans) in enumerate(self._spans.items()):
            events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": pipeline}})
            for stage, start, end in spans:
                events.append({"name": stage, "cat": "mlx26.stage", "ph": "X", "pid": pid, "tid": tid,
                               "ts": offset_us + start * 1e6, "dur": (end - start) * 1e6,
                               "args": {"pipeline": pipeline}})
                count += 1
        return count
