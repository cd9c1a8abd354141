"""Fault injection for ``mlx26 llm serve``: the failures a real LLM server shows, on demand.

Our own test device (no paper reconstructed). Modes, applied to generation requests
(``/v1/chat/completions`` and ``/v1/completions``; never to ``/v1/models`` or ``/metrics``):

* ``429`` — HTTP 429 with ``Retry-After: retry_after`` seconds.
* ``500`` — HTTP 500 with an OpenAI-style error body.
* ``malformed`` — HTTP 200 whose JSON body (or SSE chunk) is cut in the middle.
* ``slow`` — the normal reply, after ``slow_s`` seconds.
* ``cut`` — the connection is closed mid-reply (mid-stream for SSE; half the body otherwise).
* ``length`` — the reply is generated with at most ``length_tokens`` tokens and reports
  ``finish_reason: "length"``.

The modes are used in turn, one per request, for the first ``count`` generation requests
(``count = 0``: for every request); later requests are served normally.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from mlx26.core.common.errors import InputError

FAULT_MODES = ("429", "500", "malformed", "slow", "cut", "length")


@dataclass
class FaultPlan:
    modes: Sequence[str] = ()
    count: int = 0
    retry_after: float = 1.0
    slow_s: float = 2.0
    length_tokens: int = 4
    _seen: int = field(default=0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.modes = tuple(self.modes)
        bad = [m for m in self.modes if m not in FAULT_MODES]
        if bad:
            raise InputError(f"Unknown fault mode '{bad[0]}'.", "choose one of: " + ", ".join(FAULT_MODES))
        if self.count < 0:
            raise InputError(f"fault count must be ≥ 0, got {self.count}.")
        if not self.retry_after >= 0 or not self.slow_s >= 0:
            raise InputError("retry-after and slow seconds must be ≥ 0.")
        if self.length_tokens < 1:
            raise InputError(f"length tokens must be ≥ 1, got {self.length_tokens}.")

    def next(self) -> str | None:
        """The fault for the next generation request, or None to serve it normally."""
        with self._lock:
            index = self._seen
            self._seen += 1
        if not self.modes or (self.count and index >= self.count):
            return None
        return self.modes[index % len(self.modes)]

    def reset(self, modes: Sequence[str] = (), count: int = 0) -> None:
        """Replace the schedule (tests reuse one server for several modes)."""
        fresh = FaultPlan(modes, count, self.retry_after, self.slow_s, self.length_tokens)
        with self._lock:
            self.modes, self.count, self._seen = fresh.modes, fresh.count, 0
