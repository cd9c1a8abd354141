"""`--trace`: the torch.profiler trace with the lap clock's stages as their own track."""

from __future__ import annotations

import json

import pytest

from .test_cli import SMALL


def test_spans_add_up_to_the_charged_stage_times(tiny_model, torch1):
    """Every lap becomes one span: per stage, the spans sum to exactly what the clock charged."""
    from mlx26.core.profile_memory.ops import TorchOps
    from mlx26.core.profile_memory.profiler import ProfileOptions, profile

    for pipeline in ("quest", "rag"):
        spans: list = []
        result = profile(ProfileOptions(pipeline=pipeline, model="tiny-llama", context=600, decode_steps=2, budget=128),
                         tiny_model, TorchOps(), spans=spans)
        assert spans, pipeline
        for stage, seconds in result["stages"].items():
            assert sum(e - s for st, s, e in spans if st == stage) == pytest.approx(seconds, rel=1e-9, abs=1e-12)
        # consecutive laps leave no gap and never overlap
        assert all(a[2] == b[1] for a, b in zip(spans, spans[1:], strict=False))


def test_cli_trace_opens_as_chrome_trace_with_aligned_stages(run_cli, tmp_path):
    out = tmp_path / "run.json"
    result = run_cli("profile-memory", *SMALL, "--pipeline", "all", "--context", "600", "--trace", out,
                     "--format", "jsonl")
    assert result.code == 0, result.stderr
    assert "USDT" not in result.stderr and "profiler_start" not in result.stderr
    trace = json.loads(out.read_text())
    events = trace["traceEvents"]
    stages = [e for e in events if e.get("cat") == "mlx26.stage"]
    threads = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
               and e.get("pid") == "mlx26 stages"}
    assert threads == {"quest", "indexer", "rag", "memory"}
    assert {e["name"] for e in stages} <= {"prepare", "relevancy", "retrieval", "apply", "other"}
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(stages) >= len([r for r in rows if r.get("stage")])
    # alignment: operators torch recorded while the quest pipeline's clock ran sit inside one of its stage
    # spans (50 µs slack); its laps are contiguous, so its first-to-last window holds only timed work
    quest = [e for e in stages if e["args"]["pipeline"] == "quest"]
    first, last = min(e["ts"] for e in quest), max(e["ts"] + e["dur"] for e in quest)
    stages = quest
    ops = [e for e in events if e.get("cat") == "cpu_op" and first <= e["ts"] <= last]
    inside = [o for o in ops if any(s["ts"] - 50 <= o["ts"] and o["ts"] + o["dur"] <= s["ts"] + s["dur"] + 50
                                    for s in stages)]
    assert ops and len(inside) >= 0.95 * len(ops)


def test_trace_never_overwrites_without_force(run_cli, tmp_path):
    out = tmp_path / "run.json"
    out.write_text("mine")
    result = run_cli("profile-memory", *SMALL, "--trace", out)
    assert result.code == 2 and "--force" in result.stderr and out.read_text() == "mine"
    same = run_cli("profile-memory", *SMALL, "--trace", tmp_path / "x.json", "-o", tmp_path / "x.json")
    assert same.code == 2 and "same file" in same.stderr
