"""Software emulation of the HLS kernels: the same C++ compiled by g++ and called through ctypes.

The sources in ``fpga/hls/`` are the Vitis HLS kernels of ``mlx26 profile-memory --device fpga``
(He, Ma, Sun, Cong, ICML 2026 describe a GPU + Alveo U55C system; their kernels are not public,
so these are our reconstructions of its memory-bound stages: Quest page min/max, page scoring,
top-k selection and row gather). Here they are built with ``g++ -Wall -Wextra -O2
-ffp-contract=off`` into a shared library kept in a cache folder
(``$MLX26_HOME/fpga-emu/<hash>/``, never in the source tree); the hash covers the sources, the
flags and the compiler, so editing a kernel rebuilds it. ``$MLX26_CXX`` overrides the compiler.

Emulation gives functional results only: its wall-clock time is a CPU time, and every FPGA
time mlx26 reports is *modelled* from a DeviceSpec (see ``mlx26.core.profile_memory.devices``).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from mlx26.core.common.errors import InputError, RunFailure
from mlx26.core.common.files import atomic_path, umask

HLS_DIR = Path(__file__).resolve().parent / "hls"
SOURCES = ("page_minmax.cpp", "page_score.cpp", "topk_select.cpp", "gather_rows.cpp")
HEADERS = ("hls_shim.h",)
FLAGS = ("-std=c++17", "-O2", "-Wall", "-Wextra", "-ffp-contract=off", "-fPIC", "-shared")
LIB_NAME = "libmlx26_memproc.so"
MAX_TOPK = 4096
MAX_DIM = 256
LANES = 16  # floats per 512-bit beat of the kernels' wide ports
TOPK_CELLS = 512  # cells of topk_select's systolic chain: k above this takes ceil(k / 512) passes
BAD_ARGS, BAD_INDEX = -1, -2  # the kernels' return codes (hls_shim.h)


class BuildError(RunFailure):
    """g++ failed (or warned): ``stderr`` holds the compiler's own output."""

    def __init__(self, message: str, stderr: str):
        super().__init__(message)
        self.stderr = stderr


class CompilerMissing(BuildError):
    """The C++ compiler itself is absent (a missing backend, not a kernel that fails to build)."""


def compiler() -> str:
    return os.environ.get("MLX26_CXX", "").strip() or "g++"


def _cache_root() -> Path:
    from mlx26.core.common.environment import data_dir

    return data_dir() / "fpga-emu"


def source_hash(src_dir: Path = HLS_DIR, sources: tuple[str, ...] = SOURCES, cxx: str | None = None) -> str:
    """sha256 over the kernel sources, the shim header, the flags and the compiler path."""
    h = hashlib.sha256()
    for name in (*sources, *HEADERS):
        path = src_dir / name
        h.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"<absent>") + b"\0")
    h.update(" ".join(FLAGS).encode() + b"\0" + (cxx or compiler()).encode())
    return h.hexdigest()[:16]


def build_library(src_dir: Path = HLS_DIR, sources: tuple[str, ...] = SOURCES, cache: Path | None = None,
                  cxx: str | None = None) -> Path:
    """Compile the kernels (once per source hash) and return the shared library's path.

    Raises BuildError with the compiler's stderr when g++ fails or prints any warning
    (the kernels are meant to be warning-free under -Wall -Wextra).
    """
    cxx = cxx or compiler()
    if shutil.which(cxx) is None and not Path(cxx).is_file():
        raise CompilerMissing(f"C++ compiler '{cxx}' not found (needed for --fpga-backend emu)", "")
    target_dir = (cache or _cache_root()) / source_hash(src_dir, sources, cxx)
    lib = target_dir / LIB_NAME
    if lib.is_file():
        return lib
    target_dir.mkdir(parents=True, exist_ok=True)
    # the mode a linker gives a fresh library (0777 minus umask); a failed build leaves no temp file
    with atomic_path(lib, perms=0o777 & ~umask()) as tmp:
        cmd = [cxx, *FLAGS, f"-I{src_dir}", "-o", str(tmp), *[str(src_dir / s) for s in sources]]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except OSError as exc:
            raise BuildError(f"cannot run the C++ compiler '{cxx}': {exc}", str(exc)) from exc
        if proc.returncode != 0 or proc.stderr.strip():
            what = f"exit {proc.returncode}" if proc.returncode else "warnings"
            raise BuildError(f"{cxx} failed building the HLS emulation library ({what})",
                             proc.stderr.strip() or proc.stdout.strip())
    return lib


class EmuKernels:
    """ctypes bindings of the four kernels over contiguous float32 / int32 numpy arrays."""

    def __init__(self, lib_path: Path | None = None):
        self.path = lib_path or build_library()
        lib = ctypes.CDLL(str(self.path))
        fp, ip, i = ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_int), ctypes.c_int
        lib.page_minmax.argtypes = [fp, i, i, i, i, fp, fp]
        lib.page_minmax.restype = ctypes.c_int
        lib.page_score.argtypes = [fp, fp, fp, i, i, i, fp]
        lib.page_score.restype = ctypes.c_int
        lib.topk_select.argtypes = [fp, i, i, i, ip]
        lib.topk_select.restype = ctypes.c_int
        lib.gather_rows.argtypes = [fp, i, i, i, ip, i, fp]
        lib.gather_rows.restype = ctypes.c_int
        self._lib = lib

    @staticmethod
    def _f(a: Any) -> Any:
        return a.ctypes.data_as(ctypes.POINTER(ctypes.c_float))

    @staticmethod
    def _i(a: Any) -> Any:
        return a.ctypes.data_as(ctypes.POINTER(ctypes.c_int))

    def page_minmax(self, keys: Any, page: int) -> tuple[Any, Any]:
        """keys [H, T, D] → (kmin, kmax) [H, ceil(T/page), D]."""
        import numpy as np

        keys = np.ascontiguousarray(keys, dtype=np.float32)
        heads, n, dim = keys.shape
        check_dim(dim)
        check_page(page)
        pages = -(-n // page)
        kmin = np.empty((heads, pages, dim), np.float32)
        kmax = np.empty_like(kmin)
        code = self._lib.page_minmax(self._f(keys), heads, n, dim, page, self._f(kmin), self._f(kmax))
        check_code("page_minmax", code)
        return kmin, kmax

    def page_score(self, q: Any, kmin: Any, kmax: Any) -> Any:
        """q [H, D], kmin/kmax [H, P, D] → scores [H, P]."""
        import numpy as np

        q = np.ascontiguousarray(q, dtype=np.float32)
        kmin = np.ascontiguousarray(kmin, dtype=np.float32)
        kmax = np.ascontiguousarray(kmax, dtype=np.float32)
        heads, pages, dim = kmin.shape
        check_dim(dim)
        scores = np.empty((heads, pages), np.float32)
        check_code("page_score", self._lib.page_score(self._f(q), self._f(kmin), self._f(kmax), heads, pages, dim,
                                                      self._f(scores)))
        return scores

    def topk(self, scores: Any, k: int) -> Any:
        """scores [R, N] → indices [R, k], best first (ties: smaller index first)."""
        import numpy as np

        scores = np.ascontiguousarray(scores, dtype=np.float32)
        rows, n = scores.shape
        check_topk(k, n)
        out = np.empty((rows, k), np.int32)
        check_code("topk_select", self._lib.topk_select(self._f(scores), rows, n, k, self._i(out)))
        return out

    def gather(self, src: Any, idx: Any) -> Any:
        """src [R, N, W], idx [R, M] → dst [R, M, W] with dst[r, i] = src[r, idx[r, i]]."""
        import numpy as np

        src = np.ascontiguousarray(src, dtype=np.float32)
        idx = np.ascontiguousarray(idx, dtype=np.int32)
        rows, n, width = src.shape
        check_width(width)
        dst = np.empty((rows, idx.shape[1], width), np.float32)
        check_code("gather_rows", self._lib.gather_rows(self._f(src), rows, n, width, self._i(idx), idx.shape[1],
                                                        self._f(dst)))
        return dst


def check_dim(dim: int) -> None:
    """The HLS arrays' row limit (MLX26_MAX_DIM) and whole 512-bit beats, enforced by both backends before any work."""
    if dim > MAX_DIM:
        raise InputError(f"the HLS kernels hold at most {MAX_DIM} values per row in registers; got {dim}.")
    check_width(dim)


def check_width(width: int) -> None:
    """Rows move as whole 512-bit beats (16 float32): the kernels never see a partial beat."""
    if width < 1 or width % LANES:
        raise InputError(f"the HLS kernels move rows as 512-bit beats of {LANES} floats; the row length (head dim) "
                         f"must be a positive multiple of {LANES}, got {width}.",
                         "use a model whose head_dim is a multiple of 16 (64 and 128 are), or --device cpu")


def check_page(page: int) -> None:
    if page < 1:
        raise InputError(f"a Quest page holds at least one token; got page={page}.")


def check_code(kernel: str, code: int) -> None:
    """A kernel's return value: the hosts check every argument first, so a refusal here is a bug or a bad card."""
    if code == BAD_INDEX:
        raise RunFailure(f"{kernel} kernel found an index out of range")
    if code != 0:
        raise RunFailure(f"{kernel} kernel rejected its arguments (return code {code})")


def check_topk(k: int, n: int) -> None:
    """The top-k insertion array's limit (MLX26_MAX_TOPK), enforced by both backends before any work."""
    if not 1 <= k <= min(n, MAX_TOPK):
        raise InputError(f"HLS top-k needs 1 ≤ k ≤ min(n, {MAX_TOPK}); got k={k}, n={n}.")


_KERNELS: EmuKernels | None = None


def kernels() -> EmuKernels:
    """The process-wide emulation kernels (built on first use)."""
    global _KERNELS
    if _KERNELS is None:
        _KERNELS = EmuKernels()
    return _KERNELS
