"""Prometheus-style counters of ``mlx26 llm serve`` (text exposition format 0.0.4).

Our own instrumentation (no paper reconstructed): requests by endpoint and status, tokens
served, injected faults, requests in flight, and a latency histogram per endpoint.
"""

from __future__ import annotations

import threading
from collections import Counter

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def _labels(**labels: str) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return "{" + inner + "}" if inner else ""


class Metrics:
    def __init__(self, model: str):
        self.model = model
        self._lock = threading.Lock()
        self.requests: Counter[tuple[str, int]] = Counter()
        self.faults: Counter[str] = Counter()
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.in_flight = 0
        self.latency_counts: dict[str, list[int]] = {}
        self.latency_sum: dict[str, float] = {}

    def begin(self) -> None:
        with self._lock:
            self.in_flight += 1

    def end(self, endpoint: str, status: int, seconds: float) -> None:
        with self._lock:
            self.in_flight -= 1
            self.requests[(endpoint, status)] += 1
            counts = self.latency_counts.setdefault(endpoint, [0] * (len(BUCKETS) + 1))
            for i, bound in enumerate(BUCKETS):
                if seconds <= bound:
                    counts[i] += 1
            counts[-1] += 1
            self.latency_sum[endpoint] = self.latency_sum.get(endpoint, 0.0) + seconds

    def tokens(self, prompt: int, completion: int) -> None:
        with self._lock:
            self.prompt_tokens += prompt
            self.completion_tokens += completion

    def fault(self, mode: str) -> None:
        with self._lock:
            self.faults[mode] += 1

    def render(self) -> str:
        with self._lock:
            lines = ["# HELP mlx26_llm_requests_total HTTP requests by endpoint and status code.",
                     "# TYPE mlx26_llm_requests_total counter"]
            for (endpoint, status), n in sorted(self.requests.items()):
                lines.append(f"mlx26_llm_requests_total{_labels(endpoint=endpoint, status=str(status))} {n}")
            for name, value, help_text in (
                    ("mlx26_llm_prompt_tokens_total", self.prompt_tokens, "Prompt tokens of served replies."),
                    ("mlx26_llm_completion_tokens_total", self.completion_tokens, "Completion tokens served.")):
                lines += [f"# HELP {name} {help_text}", f"# TYPE {name} counter",
                          f"{name}{_labels(model=self.model)} {value}"]
            lines += ["# HELP mlx26_llm_faults_injected_total Faults injected, by mode.",
                      "# TYPE mlx26_llm_faults_injected_total counter"]
            lines += [f"mlx26_llm_faults_injected_total{_labels(mode=m)} {n}" for m, n in sorted(self.faults.items())]
            lines += ["# HELP mlx26_llm_requests_in_flight Requests being served now.",
                      "# TYPE mlx26_llm_requests_in_flight gauge", f"mlx26_llm_requests_in_flight {self.in_flight}",
                      "# HELP mlx26_llm_request_duration_seconds Time to serve a request, by endpoint.",
                      "# TYPE mlx26_llm_request_duration_seconds histogram"]
            for endpoint, counts in sorted(self.latency_counts.items()):
                for bound, n in zip([*map(str, BUCKETS), "+Inf"], counts, strict=True):
                    lines.append(f"mlx26_llm_request_duration_seconds_bucket{_labels(endpoint=endpoint, le=bound)} {n}")
                lines.append(f"mlx26_llm_request_duration_seconds_sum{_labels(endpoint=endpoint)} "
                             f"{self.latency_sum[endpoint]:.6f}")
                lines.append(f"mlx26_llm_request_duration_seconds_count{_labels(endpoint=endpoint)} {counts[-1]}")
            return "\n".join(lines) + "\n"
