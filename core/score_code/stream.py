"""Scoring code as it arrives, line by line (SecCodePRM reconstruction, arXiv 2602.10418).

Because segmentation is streaming-safe and the scorers are causal, every step except the
last one of the text seen so far is final: :class:`StreamScorer` scores a step as soon as the
next one begins (or at the end of input) and never revises it. ``block`` and ``line`` re-segment
only from the open step; ``logical`` and ``ast`` re-segment the whole buffer (indentation
state), which is quadratic on very long streams. Each step is scored by the model's
``stream()`` scorer (:mod:`runtime`): the linear PRM keeps its context sum as a running
total, the transformer reruns only the window the step is read in, so the cost of a step does
not grow with the file in any runtime (numpy, torch, onnxruntime).
"""

from __future__ import annotations

from collections.abc import Iterator

from mlx26.core.score_code.segment import Step, segment


class StreamScorer:
    def __init__(self, model, mode: str = "block"):
        segment("", mode)  # validates the mode
        self.model = model
        self.mode = mode
        self.lines: list[str] = []
        self.done = 0  # steps already emitted
        self._base = 0  # lines before the open step (block/line modes)
        self._scorer = model.stream()

    def _score(self, step: Step) -> float:
        return self._scorer.score(step.text)

    def _steps(self) -> list[Step]:
        if self.mode in ("block", "line"):
            local = segment(self.lines[self._base:], self.mode)
            return [Step(self.done + i, s.start_line + self._base, s.end_line + self._base, s.text)
                    for i, s in enumerate(local)]
        return segment(self.lines, self.mode)[self.done:]

    def feed(self, line: str) -> Iterator[tuple[Step, float]]:
        """Add one line (without its end); yield the steps it closed with their scores."""
        self.lines.append(line.rstrip("\r\n"))
        steps = self._steps()
        for step in steps[:-1]:
            yield step, self._score(step)
            self.done += 1
        if self.mode in ("block", "line") and len(steps) > 1:
            self._base = steps[-1].start_line - 1

    def close(self) -> Iterator[tuple[Step, float]]:
        for step in self._steps():
            yield step, self._score(step)
            self.done += 1
