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

The K/V-derived inputs (``page_minmax``'s keys, ``page_score``'s kmin/kmax, ``gather``'s src) are
either dense numpy arrays or :class:`Strided` views into a larger flat storage (a [heads][capacity][dim]
cache read as its first n tokens): the kernels take a stride between heads (rows) in 512-bit beats,
so such a view is passed in place, never copied.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
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
MAX_STRIDE_BEATS = 2**31 - 1  # the kernels' stride arguments are ints (128 GiB: more than any card holds)


@dataclass(frozen=True)
class Strided:
    """A [groups][n][width] float32 view of a flat storage (groups are heads, or gather's rows).

    Group g's n * width values are contiguous and start at ``offset + g * stride`` (all in floats) in
    ``storage``, a 1-D float32 numpy array; ``stride`` may exceed ``n * width`` (the view of a
    preallocated cache's first n tokens). Stride and offset are whole 512-bit beats (multiples of 16
    floats), the unit the kernels count in; :func:`check_strided` says which views they take.
    """

    storage: Any
    shape: tuple[int, int, int]
    stride: int
    offset: int = 0

    @property
    def extent(self) -> int:
        """Floats one group spans (what the kernels read of it)."""
        return self.shape[1] * self.shape[2]

    @property
    def span(self) -> int:
        """Floats from the view's first value to just past its last (0 for an empty view)."""
        groups = self.shape[0]
        return (groups - 1) * self.stride + self.extent if groups and self.extent else 0


def dense(array: Any) -> Strided:
    """A [G, N, W] array as a dense Strided (a copy only when it is not already float32 C-contiguous)."""
    import numpy as np

    a = np.ascontiguousarray(array, dtype=np.float32)
    if a.ndim != 3:
        raise InputError(f"expected a [groups, n, width] array, got shape {tuple(a.shape)}.")
    return Strided(a.reshape(-1), tuple(int(x) for x in a.shape), a.shape[1] * a.shape[2])


def as_strided_input(x: Any, what: str, check_row: Any) -> Strided:
    """A kernel's strided input: a Strided view or any [G, N, W] array (made dense), its row length checked
    by ``check_row`` (the kernel's own rule, named first) and then its layout."""
    view = x if isinstance(x, Strided) else dense(x)
    check_row(view.shape[2])
    check_strided(view, what)
    return view


def check_strided(view: Strided, what: str) -> None:
    """The layouts the kernels read: whole-beat head strides that never overlap, inside the storage.

    An overlapping or negative stride has no meaning for a per-head reduction, and a view that runs past
    its storage would read memory it does not own (the emulation) or outside the buffer (the card).
    """
    import numpy as np

    st = view.storage
    if not isinstance(st, np.ndarray) or st.dtype != np.float32 or st.ndim != 1 or not st.flags.c_contiguous:
        raise InputError(f"{what}: a strided view needs a flat, contiguous float32 storage.")
    if len(view.shape) != 3 or min(view.shape) < 0 or view.offset < 0:
        raise InputError(f"{what}: a [groups, n, width] view needs a non-negative shape and offset; got {view.shape}, "
                         f"offset {view.offset}.")
    if view.stride < 0 or view.stride % LANES:
        raise InputError(f"{what}: the stride between heads must be a non-negative whole number of 512-bit beats "
                         f"({LANES} floats); got {view.stride} floats.")
    if view.offset % LANES:
        raise InputError(f"{what}: a view must start on a 512-bit beat (an offset that is a multiple of {LANES} "
                         f"floats); got {view.offset}.")
    if view.stride // LANES > MAX_STRIDE_BEATS:
        raise InputError(f"{what}: a stride of {view.stride // LANES} beats does not fit the kernels' 32-bit argument.")
    if view.stride < view.extent:
        raise InputError(f"{what}: a stride of {view.stride} floats is below one head's {view.extent} "
                         "(heads would overlap).")
    if view.offset + view.span > st.size:
        raise InputError(f"{what}: the view ends at float {view.offset + view.span}, past its storage of {st.size}.")


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
        lib.page_minmax.argtypes = [fp, i, i, i, i, i, fp, fp]
        lib.page_minmax.restype = ctypes.c_int
        lib.page_score.argtypes = [fp, fp, fp, i, i, i, i, fp]
        lib.page_score.restype = ctypes.c_int
        lib.topk_select.argtypes = [fp, i, i, i, ip]
        lib.topk_select.restype = ctypes.c_int
        lib.gather_rows.argtypes = [fp, i, i, i, i, ip, i, fp]
        lib.gather_rows.restype = ctypes.c_int
        self._lib = lib

    @staticmethod
    def _f(a: Any) -> Any:
        return a.ctypes.data_as(ctypes.POINTER(ctypes.c_float))

    @staticmethod
    def _i(a: Any) -> Any:
        return a.ctypes.data_as(ctypes.POINTER(ctypes.c_int))

    @staticmethod
    def _at(view: Strided) -> Any:
        """A float pointer to the view's first value (inside its storage, which the caller keeps alive)."""
        return ctypes.cast(view.storage.ctypes.data + 4 * view.offset, ctypes.POINTER(ctypes.c_float))

    def page_minmax(self, keys: Any, page: int) -> tuple[Any, Any]:
        """keys [H, T, D] (an array or a :class:`Strided` view) → (kmin, kmax) [H, ceil(T/page), D]."""
        import numpy as np

        keys = as_strided_input(keys, "keys", check_dim)
        heads, n, dim = keys.shape
        check_page(page)
        pages = -(-n // page)
        kmin = np.empty((heads, pages, dim), np.float32)
        kmax = np.empty_like(kmin)
        code = self._lib.page_minmax(self._at(keys), heads, n, dim, keys.stride // LANES, page, self._f(kmin),
                                     self._f(kmax))
        check_code("page_minmax", code)
        return kmin, kmax

    def page_score(self, q: Any, kmin: Any, kmax: Any) -> Any:
        """q [H, D], kmin/kmax [H, P, D] (arrays or :class:`Strided` views with one stride) → scores [H, P]."""
        import numpy as np

        kmin, kmax = bounds_pair(kmin, kmax)
        heads, pages, dim = kmin.shape
        q = query(q, heads, dim)
        scores = np.empty((heads, pages), np.float32)
        check_code("page_score", self._lib.page_score(self._f(q), self._at(kmin), self._at(kmax), heads, pages, dim,
                                                      kmin.stride // LANES, self._f(scores)))
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
        """src [R, N, W] (an array or a :class:`Strided` view), idx [R, M] → dst [R, M, W], dst[r, i] = src[r, idx[r, i]]."""
        import numpy as np

        src = as_strided_input(src, "src", check_width)
        rows, n, width = src.shape
        idx = gather_indices(idx, rows)
        dst = np.empty((rows, idx.shape[1], width), np.float32)
        check_code("gather_rows", self._lib.gather_rows(self._at(src), rows, n, width, src.stride // LANES,
                                                        self._i(idx), idx.shape[1], self._f(dst)))
        return dst


def bounds_pair(kmin: Any, kmax: Any) -> tuple[Strided, Strided]:
    """page_score's kmin and kmax: one port pair with one head stride, so both views need the same shape and stride."""
    lo, hi = as_strided_input(kmin, "kmin", check_dim), as_strided_input(kmax, "kmax", check_dim)
    if lo.shape != hi.shape or lo.stride != hi.stride:
        raise InputError(f"kmin and kmax must have the same shape and head stride; got {lo.shape} / {hi.shape}, "
                         f"strides {lo.stride} / {hi.stride}.")
    return lo, hi


def query(q: Any, heads: int, dim: int) -> Any:
    """page_score's q as a dense [heads, dim] float32 array (the kernel reads heads * dim floats of it)."""
    import numpy as np

    q = np.ascontiguousarray(q, dtype=np.float32)
    if q.shape != (heads, dim):
        raise InputError(f"page_score needs q of shape {(heads, dim)}, got {tuple(q.shape)}.")
    return q


def gather_indices(idx: Any, rows: int) -> Any:
    """gather's idx as a dense [rows, M] int32 array (the kernel reads rows * M of them)."""
    import numpy as np

    idx = np.ascontiguousarray(idx, dtype=np.int32)
    if idx.ndim != 2 or idx.shape[0] != rows:
        raise InputError(f"gather needs idx of shape [{rows}, M], got {tuple(idx.shape)}.")
    return idx


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
