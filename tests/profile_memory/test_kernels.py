"""The HLS kernels built by g++ equal their torch references bit for bit; the build is clean and cached."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from mlx26.core.common import files
from mlx26.fpga import emu

from .conftest import assert_every_kernel_refuses

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.fixture(scope="module")
def kernels():
    return emu.kernels()


@pytest.mark.parametrize(("heads", "tokens", "dim"), [(1, 16, 16), (3, 77, 64), (2, 5, 128), (2, 40, 256)])
def test_page_minmax_bitwise(kernels, torch1, heads, tokens, dim):
    from mlx26.core.profile_memory.reference import page_minmax

    keys = np.random.default_rng(tokens).standard_normal((heads, tokens, dim)).astype(np.float32)
    lo, hi = kernels.page_minmax(keys, 16)
    ref_lo, ref_hi = page_minmax(torch1.from_numpy(keys), 16)
    assert lo.shape == (heads, -(-tokens // 16), dim)
    assert np.array_equal(lo.view(np.uint32), ref_lo.numpy().view(np.uint32))
    assert np.array_equal(hi.view(np.uint32), ref_hi.numpy().view(np.uint32))
    # independent check of one page with numpy
    assert np.array_equal(hi[0, 0], keys[0, :16].max(axis=0))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_page_score_bitwise(kernels, torch1, seed):
    from mlx26.core.profile_memory.reference import page_score_ordered

    rng = np.random.default_rng(seed)
    q = rng.standard_normal((4, 64)).astype(np.float32)
    a, b = rng.standard_normal((2, 4, 33, 64)).astype(np.float32)
    kmin, kmax = np.minimum(a, b), np.maximum(a, b)
    got = kernels.page_score(q, kmin, kmax)
    ref = page_score_ordered(*(torch1.from_numpy(x) for x in (q, kmin, kmax))).numpy()
    assert np.array_equal(got.view(np.uint32), ref.view(np.uint32))
    # the formula itself, in float64 as an independent reference
    exact = np.maximum(q[:, None] * kmin.astype(np.float64), q[:, None] * kmax.astype(np.float64)).sum(-1)
    assert np.allclose(got, exact, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(("rows", "n", "k", "ties"), [(1, 10, 1, False), (3, 500, 17, False), (2, 300, 40, True),
                                                     (4, 64, 64, True)])
def test_topk_bitwise_with_tie_rule(kernels, torch1, rows, n, k, ties):
    from mlx26.core.profile_memory.reference import topk_stable

    scores = np.random.default_rng(n).standard_normal((rows, n)).astype(np.float32)
    if ties:
        scores = np.round(scores, 1)  # many equal scores: smaller index must come first
    got = kernels.topk(scores, k)
    assert np.array_equal(got, topk_stable(torch1.from_numpy(scores), k).numpy())
    ranked = sorted(range(n), key=lambda i: (-scores[0, i], i))[:k]  # the documented rule, in plain Python
    assert got[0].tolist() == ranked


@pytest.mark.parametrize(("dim", "pages"), [(16, 1), (16, 9), (32, 8), (32, 17), (256, 3), (256, 70)])
def test_page_score_lane_tree_order_bitwise(kernels, torch1, dim, pages):
    """Every page count around the kernel's groups of 8 pages (padding of the last group) and dims of 1, 2
    and 16 beats: the kernel equals the lane-sum-then-tree reference bit for bit."""
    from mlx26.core.profile_memory.reference import page_score_ordered

    rng = np.random.default_rng(dim * 1000 + pages)
    q = (rng.standard_normal((3, dim)) * 10.0 ** rng.integers(-3, 4, dim)).astype(np.float32)  # wide range
    a, b = rng.standard_normal((2, 3, pages, dim)).astype(np.float32)
    kmin, kmax = np.minimum(a, b), np.maximum(a, b)
    got = kernels.page_score(q, kmin, kmax)
    ref = page_score_ordered(*(torch1.from_numpy(x) for x in (q, kmin, kmax))).numpy()
    assert got.shape == (3, pages) and np.array_equal(got.view(np.uint32), ref.view(np.uint32))


def _sequential_sum(values):
    acc = np.float32(0.0)
    for v in values:
        acc = np.float32(acc + v)
    return acc


def _lane_tree_sum(values):
    lanes = [_sequential_sum(values[lane::16]) for lane in range(16)]
    while len(lanes) > 1:
        lanes = [np.float32(lanes[i] + lanes[i + 1]) for i in range(0, len(lanes), 2)]
    return lanes[0]


def test_page_score_order_is_the_lane_tree_not_the_sequential_sum(kernels):
    """An input whose d = 0 … D-1 sum and lane-tree sum differ in float32: the kernel must give the latter
    (written here in plain numpy, independent of the torch reference)."""
    dim = 32
    m = np.ones(dim, np.float32)
    m[0], m[16] = 1e8, -1e8  # lane 0 cancels exactly; in sequence the 1s after d = 0 are absorbed by 1e8
    q = np.ones((1, dim), np.float32)
    kmin = kmax = m[None, None, :].copy()
    assert _sequential_sum(m) != _lane_tree_sum(m)
    got = kernels.page_score(q, kmin, kmax)[0, 0]
    assert got == _lane_tree_sum(m) == np.float32(dim - 2)


@pytest.mark.parametrize("dim", [8, 24, 40, 300])
def test_dims_not_whole_beats_are_refused_before_any_work(kernels, dim):
    """The wide ports move 16 floats per beat: other row lengths are an InputError naming the rule (dim 300
    also breaks the 256 register limit)."""
    from mlx26.core.common.errors import InputError

    rows = np.zeros((1, 4, dim), np.float32)
    needle = "registers" if dim > 256 else "multiple of 16"
    with pytest.raises(InputError, match=needle):
        kernels.page_minmax(rows, 2)
    with pytest.raises(InputError, match=needle):
        kernels.page_score(np.zeros((1, dim), np.float32), rows, rows)
    if dim <= 256:
        with pytest.raises(InputError, match="multiple of 16"):
            kernels.gather(rows, np.zeros((1, 2), np.int32))


def test_kernels_themselves_refuse_partial_beats(kernels):
    """Defence behind the host checks: called directly, the C++ returns MLX26_BAD_ARGS and writes nothing."""
    import ctypes

    lib = kernels._lib
    keys = np.ones((1, 4, 24), np.float32)
    out = np.full((1, 2, 24), 7.0, np.float32)
    stride = 8  # beats: room for the rows, so only the partial beat is wrong
    assert lib.page_minmax(kernels._f(keys), 1, 4, 24, stride, 2, kernels._f(out), kernels._f(out)) == emu.BAD_ARGS
    assert lib.page_score(kernels._f(keys), kernels._f(keys), kernels._f(keys), 1, 4, 24, stride,
                          kernels._f(out)) == emu.BAD_ARGS
    idx = np.zeros((1, 2), np.int32)
    assert lib.gather_rows(kernels._f(keys), 1, 4, 24, stride, kernels._i(idx), 2, kernels._f(out)) == emu.BAD_ARGS
    assert (out == 7.0).all()
    assert lib.topk_select(kernels._f(keys), 1, 4, 0, ctypes.cast(kernels._i(idx), ctypes.POINTER(ctypes.c_int))) \
        == emu.BAD_ARGS


@pytest.mark.parametrize(("n", "k"), [(600, 511), (600, 512), (600, 513), (1500, 1024), (1500, 1025), (5000, 4096)])
def test_topk_ties_across_the_chain_passes(kernels, torch1, n, k):
    """k above the 512-cell chain takes several passes; runs of equal scores straddle the pass boundaries
    (entries 511/512, 1023/1024, …) and must still come out smaller index first."""
    from mlx26.core.profile_memory.reference import topk_stable

    rng = np.random.default_rng(k)
    scores = rng.integers(0, 6, (2, n)).astype(np.float32)  # a handful of values: long runs of ties
    scores[1, :] = 1.0  # one row all equal: the answer is 0 … k-1
    got = kernels.topk(scores, k)
    assert np.array_equal(got, topk_stable(torch1.from_numpy(scores), k).numpy())
    assert got[1].tolist() == list(range(k))
    ranked = sorted(range(n), key=lambda i: (-scores[0, i], i))[:k]
    assert got[0].tolist() == ranked


def test_topk_rejects_bad_k(kernels):
    with pytest.raises(ValueError, match="k"):
        kernels.topk(np.zeros((1, 5), np.float32), 6)


def test_gather_bitwise(kernels, torch1):
    from mlx26.core.profile_memory.reference import gather

    rng = np.random.default_rng(3)
    src = rng.standard_normal((3, 50, 16)).astype(np.float32)
    idx = rng.integers(0, 50, (3, 20)).astype(np.int32)
    got = kernels.gather(src, idx)
    assert np.array_equal(got, gather(torch1.from_numpy(src), torch1.from_numpy(idx).long()).numpy())
    assert np.array_equal(got[1, 4], src[1, idx[1, 4]])
    with pytest.raises(RuntimeError, match="out of range"):
        kernels.gather(src, np.full((3, 1), 50, np.int32))
    bad = idx.copy()
    bad[2, 19] = -1  # the last index of the last row: every index is checked before anything moves
    dst = np.full((3, 20, 16), 7.0, np.float32)
    code = kernels._lib.gather_rows(kernels._f(src), 3, 50, 16, 50, kernels._i(bad), 20, kernels._f(dst))
    assert code == emu.BAD_INDEX and (dst == 7.0).all()


@pytest.mark.parametrize("width", [16, 48, 1024])
def test_gather_wide_rows_bitwise(kernels, torch1, width):
    """Rows of 1, 3 and 64 beats (Quest gathers page rows of 16 tokens x head_dim)."""
    rng = np.random.default_rng(width)
    src = rng.standard_normal((2, 9, width)).astype(np.float32)
    idx = rng.integers(0, 9, (2, 5)).astype(np.int32)
    assert np.array_equal(kernels.gather(src, idx), src[np.arange(2)[:, None], idx])


def test_gxx_wall_wextra_is_clean(tmp_path):
    proc = subprocess.run(["g++", *emu.FLAGS, f"-I{emu.HLS_DIR}", "-o", str(tmp_path / "k.so"),
                           *[str(emu.HLS_DIR / s) for s in emu.SOURCES]], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_build_is_cached_by_source_hash(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(emu.HLS_DIR, src)
    first = emu.build_library(src, cache=tmp_path / "cache")
    stamp = first.stat().st_mtime_ns
    assert emu.build_library(src, cache=tmp_path / "cache") == first and first.stat().st_mtime_ns == stamp
    assert not str(first).startswith(str(emu.HLS_DIR))  # never inside the source tree
    assert first.stat().st_mode & 0o777 == 0o777 & ~files.umask()  # as the linker makes it, not mkstemp's 0600
    assert [f.name for f in first.parent.iterdir()] == [emu.LIB_NAME]
    (src / "gather_rows.cpp").write_text((src / "gather_rows.cpp").read_text() + "\n// edited\n")
    second = emu.build_library(src, cache=tmp_path / "cache")
    assert second != first and second.is_file()


def test_compiler_error_carries_stderr(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(emu.HLS_DIR, src)
    (src / "page_score.cpp").write_text("this is not C++;\n")
    with pytest.raises(emu.BuildError) as info:
        emu.build_library(src, cache=tmp_path / "cache")
    assert "error" in info.value.stderr and "page_score.cpp" in info.value.stderr
    assert not list((tmp_path / "cache").rglob("*.so"))
    assert not [f for f in (tmp_path / "cache").rglob("*") if f.is_file()]  # nor the temporary output


def test_warning_is_a_build_error(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(emu.HLS_DIR, src)
    (src / "gather_rows.cpp").write_text((src / "gather_rows.cpp").read_text() + "\nstatic int unused_fn() { return 1; }\n")
    with pytest.raises(emu.BuildError, match="warnings") as info:
        emu.build_library(src, cache=tmp_path / "cache")
    assert "unused" in info.value.stderr


def _cache(heads=3, capacity=100, dim=32, seed=0):
    """A flat storage and its [heads][capacity][dim] view, as a preallocated KV cache lies in memory."""
    storage = np.random.default_rng(seed).standard_normal(heads * capacity * dim).astype(np.float32)
    return storage, storage.reshape(heads, capacity, dim)


@pytest.mark.parametrize(("n", "first"), [(37, 0), (16, 0), (5, 32), (0, 0), (100, 0)])
def test_strided_views_equal_their_dense_copies_bitwise(kernels, torch1, n, first):
    """cache[:, first:first + n] read in place (head stride = capacity * dim floats, an offset) gives the bits of the
    dense copy on all three strided kernels, and the torch references agree."""
    from mlx26.core.profile_memory.reference import gather, page_minmax, page_score_ordered

    storage, cache = _cache()
    heads, capacity, dim = cache.shape
    view = emu.Strided(storage, (heads, n, dim), capacity * dim, first * dim)
    copy = np.ascontiguousarray(cache[:, first:first + n])
    lo, hi = kernels.page_minmax(view, 16)
    want_lo, want_hi = kernels.page_minmax(copy, 16)
    assert np.array_equal(lo.view(np.uint32), want_lo.view(np.uint32))
    assert np.array_equal(hi.view(np.uint32), want_hi.view(np.uint32))
    if n:
        ref_lo, _ = page_minmax(torch1.from_numpy(copy), 16)
        assert np.array_equal(lo, ref_lo.numpy())
    q = np.random.default_rng(n).standard_normal((heads, dim)).astype(np.float32)
    bounds = emu.Strided(storage, (heads, n, dim), capacity * dim, first * dim)  # the cache as page rows
    got = kernels.page_score(q, bounds, bounds)
    assert np.array_equal(got.view(np.uint32), kernels.page_score(q, copy, copy).view(np.uint32))
    ref = page_score_ordered(*(torch1.from_numpy(x) for x in (q, copy, copy))).numpy()
    assert np.array_equal(got.view(np.uint32), ref.view(np.uint32))
    if n:
        idx = np.random.default_rng(1).integers(0, n, (heads, 9)).astype(np.int32)
        dst = kernels.gather(view, idx)
        assert np.array_equal(dst, kernels.gather(copy, idx))
        assert np.array_equal(dst, gather(torch1.from_numpy(copy), torch1.from_numpy(idx).long()).numpy())


def test_gather_page_rows_with_a_stride_that_is_no_whole_number_of_rows(kernels):
    """Quest gathers page rows of 16 tokens x dim from a cache whose capacity (here 100) is no multiple of 16:
    the head stride, 100 * dim floats, is whole beats but not whole page rows."""
    storage, cache = _cache()
    heads, capacity, dim = cache.shape
    pages = 5
    view = emu.Strided(storage, (heads, pages, 16 * dim), capacity * dim)
    rows = np.ascontiguousarray(cache[:, :pages * 16]).reshape(heads, pages, 16 * dim)
    idx = np.array([[4, 0], [2, 2], [1, 3]], np.int32)
    assert np.array_equal(kernels.gather(view, idx), rows[np.arange(heads)[:, None], idx])


@pytest.mark.parametrize(("stride", "offset", "needle"), [
    (16 * 32 - 16, 0, "heads would overlap"),
    (-16 * 32, 0, "non-negative whole number"),
    (16 * 32 + 8, 0, "non-negative whole number"),
    (100 * 32, 100 * 32 * 2 + 16, "past its storage"),
    (100 * 32, -32, "negative"),
    (100 * 32, 8, "start on a 512-bit beat"),
    (2**31 * 16, 0, "32-bit argument"),
])
def test_bad_strides_are_input_errors_before_any_work(kernels, stride, offset, needle):
    storage, _ = _cache()
    assert_every_kernel_refuses(kernels, emu.Strided(storage, (3, 16, 32), stride, offset), needle)


def test_strided_storage_and_pairing_rules(kernels):
    from mlx26.core.common.errors import InputError

    storage, _ = _cache()
    with pytest.raises(InputError, match="float32 storage"):
        kernels.page_minmax(emu.Strided(storage.astype(np.float64), (3, 16, 32), 3200), 16)
    with pytest.raises(InputError, match="float32 storage"):
        kernels.page_minmax(emu.Strided(storage.reshape(3, -1), (3, 16, 32), 3200), 16)
    a, b = emu.Strided(storage, (3, 4, 32), 3200), emu.Strided(storage, (3, 4, 32), 1600)
    with pytest.raises(InputError, match="same shape and head stride"):
        kernels.page_score(np.zeros((3, 32), np.float32), a, b)
    with pytest.raises(InputError, match="q of shape"):
        kernels.page_score(np.zeros((2, 32), np.float32), a, a)
    with pytest.raises(InputError, match="registers"):  # the kernel's own row rule is named before the layout's
        kernels.page_minmax(emu.Strided(storage, (1, 2, 300), 300), 16)


def test_kernels_themselves_refuse_overlapping_strides(kernels):
    """Behind the host checks: a head stride below the rows' extent returns MLX26_BAD_ARGS and writes nothing."""
    keys = np.ones((2, 4, 16), np.float32)
    out = np.full((2, 4, 16), 7.0, np.float32)
    f = kernels._f
    assert kernels._lib.page_minmax(f(keys), 2, 4, 16, 3, 2, f(out), f(out)) == emu.BAD_ARGS
    assert kernels._lib.page_minmax(f(keys), 2, 4, 16, -4, 2, f(out), f(out)) == emu.BAD_ARGS
    assert kernels._lib.page_score(f(keys), f(keys), f(keys), 2, 4, 16, 3, f(out)) == emu.BAD_ARGS
    idx = np.zeros((2, 1), np.int32)
    assert kernels._lib.gather_rows(f(keys), 2, 4, 16, 3, kernels._i(idx), 1, f(out)) == emu.BAD_ARGS
    assert (out == 7.0).all()
    assert kernels._lib.page_minmax(f(keys), 2, 4, 16, 4, 2, f(out), f(out)) == 0  # stride == extent: dense


def test_fpga_ops_pass_cache_views_in_place(kernels, torch1, monkeypatch):
    """FpgaOps hands the kernels a cache's [:, :n] view as its storage and head stride (no dense copy), and copies
    only what the kernels cannot read in place; the results equal the torch references."""
    from mlx26.core.profile_memory import ops as ops_mod
    from mlx26.core.profile_memory.reference import gather, page_minmax, page_score_ordered

    ops = ops_mod.FpgaOps("emu")
    seen = []
    for name in ("page_minmax", "page_score", "gather"):
        real = getattr(kernels, name)
        monkeypatch.setattr(kernels, name, lambda *a, _real=real, **kw: seen.append(a) or _real(*a, **kw))
    cache = torch1.randn(4, 80, 32)
    kmin = torch1.randn(4, 5, 32)
    view = cache[:, :37]
    lo, hi = ops.page_minmax(view, 16)
    assert isinstance(seen[-1][0], emu.Strided) and seen[-1][0].stride == 80 * 32
    assert seen[-1][0].storage.ctypes.data == cache.data_ptr()  # the cache itself, not a copy
    ref_lo, ref_hi = page_minmax(view.contiguous(), 16)
    assert torch1.equal(lo, ref_lo) and torch1.equal(hi, ref_hi)
    q = torch1.randn(4, 32)
    got = ops.page_score(q, kmin[:, :3], kmin[:, :3] + 1)  # the second is a temporary: both go dense
    assert not isinstance(seen[-1][1], emu.Strided) and not isinstance(seen[-1][2], emu.Strided)
    got2 = ops.page_score(q, kmin[:, :3], kmin[:, 1:4])
    assert isinstance(seen[-1][1], emu.Strided) and seen[-1][2].offset == 32
    assert torch1.equal(got2, page_score_ordered(q, kmin[:, :3].contiguous(), kmin[:, 1:4].contiguous()))
    assert got.shape == (4, 3)
    idx = torch1.randint(0, 37, (4, 6))
    assert torch1.equal(ops.gather(view, idx), gather(view.contiguous(), idx))
    assert isinstance(seen[-1][0], emu.Strided)
    ops.page_minmax(cache[:, 5:9].transpose(1, 2).transpose(1, 2).contiguous(), 16)  # a temporary: dense
    assert not isinstance(seen[-1][0], emu.Strided)


def test_in_place_view_rule(torch1):
    from mlx26.core.profile_memory.ops import in_place_view

    cache = torch1.zeros(4, 80, 32)
    assert in_place_view(cache[:, :37]) and in_place_view(cache[:, 16:20]) and in_place_view(cache[1:3, :5])
    assert not in_place_view(cache)  # owns its storage whole: the dense path
    assert not in_place_view(cache[:, :5].contiguous())
    assert not in_place_view(cache[:1, :5].expand(4, 5, 32))  # heads overlap (stride 0)
    assert not in_place_view(cache[:, :5, :16])  # rows are not contiguous
    assert not in_place_view(cache.double()[:, :5]) and not in_place_view(cache[:, :0])
    odd = torch1.zeros(4, 88)[:, :80].unflatten(1, (5, 16))  # heads 88 floats apart: not whole beats
    assert odd.stride() == (88, 16, 1) and not in_place_view(odd)
    assert in_place_view(torch1.zeros(4, 96)[:, :80].unflatten(1, (5, 16)))
