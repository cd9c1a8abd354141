"""The int4 runtime (`--runtime int4`): packed 4-bit codes through torch's int4 CPU kernel.

The reference is the dequantized fp32 path (``tileq_loop``): the int4 path must give the same outputs up to
bf16 activation rounding, far below the quantization error itself, while holding ≤ 0.3× the fp32 weight bytes.
"""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
torch.set_num_threads(1)

from mlx26.core.common.errors import InputError  # noqa: E402
from mlx26.core.quantize_moe import quant  # noqa: E402
from mlx26.core.quantize_moe import synthetic as syn  # noqa: E402
from mlx26.kernels import quantize_moe as kern  # noqa: E402
from mlx26.kernels import quantize_moe_int4 as k4  # noqa: E402

PROJ = ("gate_up_proj", "down_proj")


def _rms(t):
    return float(t.pow(2).mean().sqrt())


def test_packed_matmul_equals_dequantized_weights():
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(3, 48, 128, generator=gen)
    q = quant.rtn(w, 4, 64)
    packed = k4.pack(q.codes, q.scale, q.zero, 4, 64)
    x = torch.randn(7, 128, generator=gen)
    deq = q.dequantize()
    for e in range(3):
        ref = x @ deq[e].T
        got = packed.matmul(x, e)
        assert got.dtype == torch.float32 and got.shape == ref.shape
        # bf16 activations: ~3 significant digits; the 4-bit rounding itself is an order of magnitude larger
        assert _rms(got - ref) < 0.01 * _rms(ref)
        assert _rms(got - ref) < 0.1 * _rms(x @ w[e].T - ref)


def test_experts_forward_matches_the_dequantized_loop_and_holds_under_0_3x_fp32():
    from mlx26.core.quantize_moe import lowrank

    E, H, D = 8, 128, 96
    fp = syn.experts_module(E, H, D, seed=1)
    full = {p: getattr(fp, p).detach().clone() for p in PROJ}
    codes = {p: quant.rtn(full[p], 4, 32) for p in PROJ}
    gen = torch.Generator().manual_seed(2)
    f = {p: lowrank.Factors(0.01 * torch.randn(E, m, 8, generator=gen), 0.01 * torch.randn(E, 8, n, generator=gen),
                            None, torch.arange(E), torch.arange(E))
         for p, (m, n) in (("gate_up_proj", (2 * D, H)), ("down_proj", (H, D)))}
    x, idx, w = syn.routing(64, E, 2, H, seed=3)
    with torch.inference_mode():
        ref_full = kern.loop_experts_forward(fp, x, idx, w)
        for p in PROJ:
            getattr(fp, p).data.copy_(codes[p].dequantize())
        fp.tileq_factors = f
        ref = kern.loop_experts_forward(fp, x, idx, w)
        fp.tileq_factors = {}
        ref_nofactors = kern.loop_experts_forward(fp, x, idx, w)
    i4 = syn.experts_module(E, H, D, seed=1)
    k4.attach(i4, {p: k4.pack(c.codes, c.scale, c.zero, 4, 32, p) for p, c in codes.items()})
    assert all(getattr(i4, p).numel() == 0 for p in PROJ)  # no fp32 copy is kept
    i4.tileq_factors = f
    with torch.inference_mode():
        got = k4.int4_experts_forward(i4, x, idx, w)
        i4.tileq_factors = {}
        got_nofactors = k4.int4_experts_forward(i4, x, idx, w)
    quant_err = _rms(ref_nofactors - ref_full)
    assert _rms(got - ref) < 0.1 * quant_err
    assert _rms(got_nofactors - ref_nofactors) < 0.1 * quant_err
    assert _rms(got - got_nofactors) > 0  # the corrections are applied
    i4.tileq_factors = f
    sizes = k4.resident_bytes(i4)
    fp32 = 4 * E * (2 * D * H + H * D)
    assert sizes["fp32_bytes"] == fp32
    # codes: 0.5 byte per weight; bf16 scale and zero per 32 weights: 4/32 byte; factors counted from the tensors
    assert sizes["int4_bytes"] == fp32 // 8 + 4 * E * (2 * D * H + H * D) // 32
    assert sizes["factor_bytes"] == sum(t.numel() * t.element_size() for v in f.values()
                                        for t in (v.U, v.V, v.rows, v.cols))
    assert (sizes["int4_bytes"] + sizes["factor_bytes"]) / fp32 <= 0.3


@pytest.mark.parametrize(("bits", "group", "out", "needle"), [(3, 64, 64, "4-bit"), (4, 48, 64, "group sizes"),
                                                              (4, 64, 60, "multiple of 8")])
def test_kernel_limits_are_typed_errors(bits, group, out, needle):
    with pytest.raises(InputError, match=needle):
        k4.check(bits, group, out, 192)


def test_cli_int4_runtime_end_to_end(run_cli, tmp_path):
    """Quantize and evaluate on int4; reload the saved folder on int4 and on fp32: the same model."""
    out = tmp_path / "q4"
    args = ["--eval-ppl", "heldout", "--eval-bytes", "3000", "--format", "jsonl"]
    first = run_cli("quantize-moe", "--bits", "4", "--lowrank", "lqer", "--rank", "4", "--calib-bytes", "2048",
                    "--runtime", "int4", "--out", out, *args)
    assert first.code == 0, first.stderr
    s = json.loads(first.stdout.splitlines()[-1])
    assert s["runtime"] == "int4" and s["resident_over_fp32"] <= 0.3
    assert s["resident_expert_bytes"] == s["resident_int4_bytes"] + s["resident_factor_bytes"]
    reloaded = {rt: json.loads(run_cli("quantize-moe", "--model", out, "--runtime", rt, *args).stdout.splitlines()[-1])
                for rt in ("int4", "fp32")}
    assert reloaded["int4"]["ppl_quantized"] == pytest.approx(s["ppl_quantized"], rel=1e-5)  # fp16 factors on disk
    assert reloaded["int4"]["ppl_quantized"] == pytest.approx(reloaded["fp32"]["ppl_quantized"], rel=5e-3)
    assert reloaded["int4"]["resident_over_fp32"] == s["resident_over_fp32"]


@pytest.mark.parametrize("args", [["--bits", "3"], ["--group-size", "96"], ["--runtime", "int8"]])
def test_cli_int4_refuses_what_the_kernel_cannot_take(run_cli, args):
    result = run_cli("quantize-moe", "--runtime", "int4", *args, "--calib-bytes", "1024") if args[0] != "--runtime" \
        else run_cli("quantize-moe", *args, "--calib-bytes", "1024")
    assert result.code == 2, result.stderr
    assert result.error_lines[0].startswith("Error:") and "Traceback" not in result.stderr and result.stdout == ""
    if args[0] == "--bits":  # the option at fault is named, not the first projection that carries it
        assert "--runtime int4 needs --bits 4, got --bits 3" in result.stderr
