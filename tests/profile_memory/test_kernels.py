"""The HLS kernels built by g++ equal their torch references bit for bit; the build is clean and cached."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from mlx26.core.common import files
from mlx26.fpga import emu

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.fixture(scope="module")
def kernels():
    return emu.kernels()


@pytest.mark.parametrize(("heads", "tokens", "dim"), [(1, 16, 8), (3, 77, 64), (2, 5, 128)])
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
