"""Chunked perplexity and its paired standard error (`--eval-ppl`)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("torch")

from mlx26.core.quantize_moe.evaluate import chunks_ppl, paired_delta  # noqa: E402


def test_paired_delta_is_the_log_ratio_of_the_pooled_perplexities():
    rng = np.random.default_rng(0)
    n = rng.integers(200, 1200, 30)
    a = [(float(x), int(c)) for x, c in zip(rng.uniform(3, 5, 30) * n, n, strict=True)]
    b = [(x - 0.01 * c + float(rng.normal(0, 2)), c) for x, c in a]
    mean, se = paired_delta(a, b)
    assert mean == pytest.approx(math.log(chunks_ppl(a)) - math.log(chunks_ppl(b)), abs=1e-12)
    assert se > 0
    assert paired_delta(a, a) == (0.0, 0.0)


def test_standard_error_matches_the_spread_over_repeated_texts():
    """Simulation: per-token NLL differences with chunk-level noise; the reported SE ≈ the estimate's spread."""
    rng = np.random.default_rng(1)
    estimates, ses = [], []
    for _ in range(400):
        n = rng.integers(500, 1000, 25)
        d = 0.02 * n + rng.normal(0, 3.0, 25)  # Σ per-chunk difference in nats
        b = [(float(4.0 * c), int(c)) for c in n]
        a = [(x + float(di), c) for (x, c), di in zip(b, d, strict=True)]
        m, s = paired_delta(a, b)
        estimates.append(m)
        ses.append(s)
    assert np.mean(estimates) == pytest.approx(0.02, abs=3 * np.std(estimates) / 20)
    assert np.mean(ses) == pytest.approx(np.std(estimates), rel=0.15)


def test_one_chunk_has_no_standard_error():
    assert math.isnan(paired_delta([(10.0, 5)], [(9.0, 5)])[1])


def test_cli_summary_reports_paired_differences(run_cli):
    result = run_cli("quantize-moe", "--bits", "2", "--lowrank", "lqer", "--rank", "4", "--calib-bytes", "2048",
                     "--eval-ppl", "heldout", "--eval-bytes", "20000", "--format", "jsonl")
    assert result.code == 0, result.stderr
    s = json.loads(result.stdout.splitlines()[-1])
    for name, (x, y) in {"quantized_vs_fp": ("ppl_quantized", "ppl_fp"), "base_vs_fp": ("ppl_base", "ppl_fp"),
                         "quantized_vs_base": ("ppl_quantized", "ppl_base")}.items():
        assert s[f"dlnppl_{name}"] == pytest.approx(math.log(s[x] / s[y]), abs=1e-9)
        assert s[f"dlnppl_{name}_se"] > 0
    # 2-bit RTN hurts clearly, and LQER recovers part of it: both beyond 3 standard errors
    assert s["dlnppl_base_vs_fp"] > 3 * s["dlnppl_base_vs_fp_se"]
    assert s["dlnppl_quantized_vs_base"] < -3 * s["dlnppl_quantized_vs_base_se"]
