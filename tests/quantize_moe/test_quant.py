"""Base quantizers and bit packing: invariants and independent brute-force references."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

from mlx26.core.quantize_moe import quant  # noqa: E402


@pytest.mark.parametrize("bits", [2, 3, 4, 8])
@pytest.mark.parametrize("count", [1, 7, 8, 1001])
def test_pack_round_trip_and_size(bits, count):
    rng = np.random.default_rng(bits * count)
    codes = rng.integers(0, 2 ** bits, size=count, dtype=np.uint8)
    packed = quant.pack_bits(codes, bits)
    assert packed.dtype == np.uint8 and packed.size == (count * bits + 7) // 8
    np.testing.assert_array_equal(quant.unpack_bits(packed, bits, count), codes)


def test_pack_layout_is_lsb_first():
    # 2-bit codes 1, 2, 3, 0 → bits 10 01 11 00 (LSB first) → 0b00111001 = 57
    assert quant.pack_bits([1, 2, 3, 0], 2).tolist() == [57]
    with pytest.raises(ValueError, match="fit"):
        quant.pack_bits([4], 2)


@pytest.mark.parametrize("bits", [2, 3, 4, 8])
def test_rtn_is_nearest_point_of_its_group_grid(bits):
    """Brute force: every dequantized weight is the nearest of the 2^b grid points (q − z)·s."""
    torch.manual_seed(bits)
    W = torch.randn(3, 5, 32)
    q = quant.rtn(W, bits, 16)
    assert int(q.codes.max()) < 2 ** bits
    deq = q.dequantize()
    grid = torch.arange(2 ** bits, dtype=torch.float32)
    s = q.scale.float().repeat_interleave(16, -1)
    z = q.zero.float().repeat_interleave(16, -1)
    points = (grid - z[..., None]) * s[..., None]  # (..., n, 2^b)
    nearest = points.gather(-1, (points - W[..., None]).abs().argmin(-1, keepdim=True)).squeeze(-1)
    torch.testing.assert_close(deq, nearest, rtol=0, atol=1e-6)
    assert float((deq - W).abs().max()) <= float(s.max()) / 2 + 1e-6


def test_rtn_error_shrinks_with_bits_and_8_bit_is_near_lossless():
    torch.manual_seed(0)
    W = torch.randn(4, 16, 64)
    errs = [float((quant.rtn(W, b, 64).dequantize() - W).norm() / W.norm()) for b in (2, 3, 4, 8)]
    assert errs == sorted(errs, reverse=True)
    assert errs[-1] < 0.01


def test_bad_bits_and_group_size():
    W = torch.randn(2, 4, 48)
    with pytest.raises(ValueError, match="--bits"):
        quant.rtn(W, 5, 16)
    with pytest.raises(ValueError, match="does not divide"):
        quant.rtn(W, 4, 32)


def test_gptq_with_identity_hessian_equals_rtn():
    torch.manual_seed(1)
    W = torch.randn(8, 64)
    a, b = quant.gptq(W, torch.eye(64), 3, 32), quant.rtn(W, 3, 32)
    assert torch.equal(a.codes, b.codes)


def test_gptq_lowers_calibration_output_error():
    """GPTQ minimises ‖X(W − Q)ᵀ‖ for correlated inputs X; RTN does not look at X."""
    torch.manual_seed(2)
    n = 64
    X = torch.randn(512, n) @ (torch.eye(n) + 0.9 * torch.randn(n, n) / n ** 0.5)
    W = torch.randn(32, n)
    H = X.T.double() @ X.double() / len(X)
    g = quant.gptq(W, H, 3, 32).dequantize()
    r = quant.rtn(W, 3, 32).dequantize()
    err = lambda Wh: float((X @ (W - Wh).T).norm())  # noqa: E731
    assert err(g) < 0.9 * err(r)


def test_gptq_without_tokens_falls_back_to_rtn():
    W = torch.randn(8, 32)
    assert torch.equal(quant.gptq(W, None, 4, 16).codes, quant.rtn(W, 4, 16).codes)


def test_hqq_anchor_matches_its_own_dequantizer():
    pytest.importorskip("hqq.core.quantize")
    from hqq.core.quantize import Quantizer

    torch.manual_seed(3)
    W = torch.randn(2, 16, 64)
    q = quant.hqq(W, 3, 32)
    codes, meta = Quantizer.quantize(W.reshape(-1, 64), nbits=3, group_size=32, axis=1, bitpack=False,
                                     compute_dtype=torch.float32, device="cpu")
    ref = Quantizer.dequantize(codes, meta).reshape(W.shape).float()
    torch.testing.assert_close(q.dequantize(), ref, rtol=0, atol=2e-3)  # float16 scale/zero storage
    assert float((q.dequantize() - W).norm() / W.norm()) < 0.3


@pytest.mark.parametrize("bits", [2, 4, 8])
def test_symmetric_rtn_zero_at_the_middle_and_nearest_grid_point(bits):
    """--symmetric: zero = 2^(b−1) in every group, scale 2·max|w|/(2^b − 1), every weight on its nearest grid point."""
    torch.manual_seed(10 + bits)
    W = torch.randn(2, 6, 64)
    q = quant.rtn(W, bits, 32, symmetric=True)
    assert bool((q.zero.float() == 2 ** (bits - 1)).all())
    amax = W.reshape(2, 6, 2, 32).abs().amax(-1)
    assert torch.allclose(q.scale.float(), (2 * amax / (2 ** bits - 1)).half().float())
    deq = q.dequantize()
    grid = (torch.arange(2 ** bits, dtype=torch.float32) - 2 ** (bits - 1))
    s = q.scale.float().repeat_interleave(32, -1)
    nearest = (W.unsqueeze(-1) - grid * s.unsqueeze(-1)).abs().amin(-1)
    assert torch.allclose((W - deq).abs(), nearest, atol=1e-6)
    # the asymmetric default is unchanged and its zero points are not all the middle code
    assert not bool((quant.rtn(W, bits, 32).zero.float() == 2 ** (bits - 1)).all())
